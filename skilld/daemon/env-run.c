/* The environment a run through the service mounts (skilld/env): the one the service's cache
 * holds for the skill's content. Found through the binding a build recorded for this content, or
 * else through what the skill declares (requirements.txt, package.json, frontmatter; inference
 * runs a sandbox and is left to the build, which records its result as the binding). A skill that
 * needs an environment that is not built is refused before it is queued, naming what is missing. */
#include "env-run.h"
#include "error.h"

static char *mfree_char(char *p) {
        free(p);
        return NULL;
}

int manager_env_for_run(const char *cache_dir, int skill_dir_fd, const char *skill_hash, int *ret_fd,
                        char **error) {
        _cleanup_(skill_deps_freep) SkillDeps *deps = NULL;
        _cleanup_(skill_freep) Skill *skill = NULL;
        _cleanup_(env_spec_freep) EnvSpec *spec = NULL;
        _cleanup_free_ char *why = NULL;
        char id[65];
        int fd, r;

        r = env_binding_get(cache_dir, skill_hash, id);
        if (r > 0 && streq(id, "-")) {
                *ret_fd = -EBADF;
                return 0;
        }
        if (r > 0) {
                fd = env_open_id(cache_dir, id);
                if (fd >= 0) {
                        *ret_fd = fd;
                        return 1;
                }
        }

        r = skill_load_at(skill_dir_fd, &skill, &why);
        if (r < 0)
                return error_setf(error, r, "%s", why ?: strerror(-r));
        why = mfree_char(why);
        r = skill_deps_discover(skill_dir_fd, skill, NULL, &deps, &why);
        if (r < 0)
                return error_setf(error, r, "Cannot tell what this skill needs: %s", why ?: strerror(-r));
        r = env_spec_new(deps, skill_dir_fd, NULL, &spec, &why);
        if (r < 0)
                return error_setf(error, r, "Cannot tell what this skill needs: %s", why ?: strerror(-r));
        r = env_open_for_run(cache_dir, NULL, spec, ret_fd, &why);
        if (r == -ENOENT)
                return error_setf(error, -ENOMEDIUM, "%s. Build it with: skillctl env build --system SKILL", why);
        if (r < 0)
                return error_setf(error, r, "%s", why ?: strerror(-r));
        if (r == 0)
                *ret_fd = -EBADF;
        return r;
}
