/* What the files of the deps module share but do not export. */
#pragma once

#include "deps.h"

/* Moves *d to the end of the array (leaving *d empty); -E2BIG past DEPS_MAX. */
int deps_append(SkillDep **items, size_t *n_items, SkillDep *d);

/* The items of one metadata key's value (space-separated), each with the given where. */
int deps_parse_metadata_value(const char *value, DepEcosystem e, const char *where, SkillDep **items,
                              size_t *n_items, char **error);

/* The metadata key declaring an ecosystem's dependencies: "python-packages", ... */
const char *deps_metadata_key(DepEcosystem e);

/* Inference: appends the inferred dependencies to d (see deps.h). */
int deps_infer(int dir_fd, const SkillDepsOptions *opts, SkillDeps *d, char **error);
