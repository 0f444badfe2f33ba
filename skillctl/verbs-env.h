/* What `skillctl run` asks of skillctl's env verbs before an embedded run. */
#pragma once

#include "skill-fd.h"

/* The environment an embedded run of skill (hash, as given on the command line as skill_arg)
 * mounts: *ret_fd is its fd, or -EBADF when the skill needs none. Returns 0, or the exit status
 * after printing why the run cannot start (RUN_EXIT_ENVIRONMENT: it is not built). */
int env_prepare_run(const LocalSkill *skill, const char *skill_arg, const char *hash, int *ret_fd);
