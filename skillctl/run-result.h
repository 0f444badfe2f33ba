/* How skillctl reports the end of a run: one summary line on stderr and one exit status, the same
 * whether the run was embedded (the engine's RunResult) or went through the service (its Result
 * JSON, read back into a RunResult here). run_result_exit_code() of the engine decides the exit
 * status in both cases. */
#pragma once

#include "engine.h"
#include "output.h"

/* Exit status of skillctl's own failures in the verbs that otherwise return a run's status
 * (run, result, wait): never one a skill's exit code could be mistaken for. */
#define EXIT_RUN_FAILED 125

/* Prints "skillctl: succeeded, exit 0, 0.42s, ..., N artifacts in WHERE (limits: BACKEND)" and
 * the notes about truncated output, skipped artifacts and refused system calls; a run that could not start prints its
 * error instead. where: the output directory, or "run ID" for a run kept by the service. */
void run_summary_print(const RunResult *r, const char *where);

/* Reads a result JSON (result.json, the Result property) into a RunResult: the fields the summary
 * and the exit status need, the artifact list, the usage. r->backend points into *ret_json, which
 * the caller keeps as long as the result. Missing keys are left unknown; -EBADMSG when text is
 * not a JSON object with a known "status". */
int run_result_from_json(const char *text, cJSON **ret_json, RunResult **ret);
