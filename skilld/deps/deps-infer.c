/* Inference of what a skill's code needs (see deps.h). */
#include "deps-internal.h"
#include "error.h"

int deps_infer(int dir_fd, const SkillDepsOptions *opts, SkillDeps *d, char **error) {
        (void) dir_fd;
        (void) opts;
        (void) d;
        return error_setf(error, -EOPNOTSUPP, "Inferring dependencies is not implemented yet");
}
