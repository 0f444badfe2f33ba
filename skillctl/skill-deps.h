/* What `skillctl skill show` and `skill lint` say about a skill's dependencies. */
#pragma once

#include <cjson/cJSON.h>

#include "deps.h"
#include "lint.h"
#include "loader.h"

/* Discovers the dependencies of an opened skill, inferring them in the sandbox as an embedded run
 * would (the cgroup layer may be missing). When inference cannot run, the declared ones are
 * returned and *ret_infer_error says why; a malformed declaration is an error with its message. */
int cli_skill_deps(const SkillSource *source, const Skill *skill, SkillDeps **ret, char **ret_infer_error,
                   char **error);

/* The "Dependencies:" lines of `skill show`, escaped for the terminal. */
void cli_skill_deps_print(const SkillDeps *d, const char *infer_error);

/* Adds "dependencies" (and "dependencies_error" when inference failed) to a show --json object. */
int cli_skill_deps_json(cJSON *j, const SkillDeps *d, const char *infer_error);

/* Lint's dependency rules into report; discovery errors become errors in it. */
int cli_skill_deps_lint(const SkillSource *source, const Skill *skill, LintReport *report);
