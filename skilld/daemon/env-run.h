/* Finding the environment of a service run (see env-run.c). */
#pragma once

#include "deps.h"
#include "env.h"

/* 1 with an O_PATH fd of the environment, 0 (fd -EBADF) when the skill needs none, -ENOMEDIUM
 * with a message naming what is missing when it needs one that is not built. */
int manager_env_for_run(const char *cache_dir, int skill_dir_fd, const char *skill_hash, int *ret_fd,
                        char **error);
