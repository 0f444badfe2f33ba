/* Dependencies in the skill verbs: discovery with inference as `skillctl run` would sandbox it,
 * and their rendering. Inference needs the sandbox; where it cannot run (no user namespaces, no
 * python3), what the skill declares is still shown and the reason is given. */
#include "engine.h"
#include "error.h"
#include "log.h"
#include "skill-deps.h"

int cli_skill_deps(const SkillSource *source, const Skill *skill, SkillDeps **ret, char **ret_infer_error,
                   char **error) {
        SkillDepsOptions opts = SKILL_DEPS_OPTIONS_INIT;
        _cleanup_free_ char *infer_error = NULL;
        int r;

        opts.infer = true;
        opts.skill_dir = source->path;
        opts.allow_missing = SANDBOX_LAYER_CGROUP;
        r = skill_deps_discover(source->dir_fd, skill, &opts, ret, &infer_error);
        if (r >= 0)
                return 0;
        /* Try again without inference: a declaration error then shows up on its own. */
        opts.infer = false;
        r = skill_deps_discover(source->dir_fd, skill, &opts, ret, error);
        if (r < 0)
                return r;
        *ret_infer_error = TAKE_PTR(infer_error);
        return 0;
}

static void print_dep(const SkillDep *x, bool first) {
        _cleanup_free_ char *name = cescape(x->name), *spec = cescape(strempty(x->spec)),
                            *where = cescape(strempty(x->where)), *module = cescape(strempty(x->module)),
                            *version = cescape(strempty(x->version)), *label = NULL;
        const char *origin = dep_origin_to_string(x->origin);

        label = strdup_printf("%s%s%s", strna(name), x->ecosystem == DEP_ECOSYSTEM_NODE && x->spec ? "@" : "",
                              strempty(spec));
        printf("%s%-8s %-28s %-12s %s", first ? " Dependencies: " : "               ",
               dep_ecosystem_to_string(x->ecosystem), strna(label), origin, strna(where));
        if (x->origin == DEP_ORIGIN_INFERRED) {
                if (!streq_ptr(module, name))
                        printf(" (import %s)", strna(module));
                if (x->declared)
                        printf(", declared");
                if (x->vendored)
                        printf(", vendored in node_modules");
                if (x->optional)
                        printf(", optional");
        } else {
                if (x->version && x->version[0])
                        printf(", locked %s", strna(version));
                if (x->ecosystem == DEP_ECOSYSTEM_PYTHON || x->ecosystem == DEP_ECOSYSTEM_NODE)
                        printf("%s", x->pinned ? ", pinned" : ", not pinned");
        }
        printf("\n");
}

void cli_skill_deps_print(const SkillDeps *d, const char *infer_error) {
        bool first = true;

        if (d->requirements_file || d->package_json) {
                _cleanup_free_ char *req = cescape(strempty(d->requirements_file)),
                                    *pkg = cescape(strempty(d->package_json)),
                                    *lock = cescape(strempty(d->package_lock));

                printf(" Declarations:");
                if (d->requirements_file)
                        printf(" %s", strna(req));
                if (d->package_json)
                        printf(" %s%s%s", strna(pkg), d->package_lock ? " + " : " (no lockfile)",
                               d->package_lock ? strna(lock) : "");
                printf("\n");
        }
        for (size_t k = 0; k < d->n; k++) {
                print_dep(&d->items[k], first);
                first = false;
        }
        if (first)
                printf(" Dependencies: none%s\n", d->inferred || infer_error ? "" : " (no scripts to scan)");
        STRV_FOREACH(u, d->unparsed) {
                _cleanup_free_ char *e = cescape(*u);
                printf("  Not scanned: %s\n", strna(e));
        }
        if (infer_error) {
                _cleanup_free_ char *e = cescape(infer_error);
                printf("  Not scanned: imports could not be inferred: %s\n", strna(e));
        }
}

int cli_skill_deps_json(cJSON *j, const SkillDeps *d, const char *infer_error) {
        cJSON *o = NULL;
        int r;

        r = skill_deps_to_json(d, &o);
        if (r < 0)
                return r;
        if (!cJSON_AddItemToObject(j, "dependencies", o)) {
                cJSON_Delete(o);
                return -ENOMEM;
        }
        if (infer_error && !cJSON_AddStringToObject(o, "inference_error", infer_error))
                return -ENOMEM;
        return 0;
}

int cli_skill_deps_lint(const SkillSource *source, const Skill *skill, LintReport *report) {
        _cleanup_(skill_deps_freep) SkillDeps *d = NULL;
        _cleanup_free_ char *error = NULL, *infer_error = NULL;
        int r;

        r = cli_skill_deps(source, skill, &d, &infer_error, &error);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                SkillDepsOptions files_only = SKILL_DEPS_OPTIONS_INIT;

                /* If the files alone are fine, the frontmatter was at fault, and skill_lint()
                 * reported that already with its line. */
                if (skill_deps_discover(source->dir_fd, NULL, &files_only, &d, NULL) < 0)
                        return lint_report_add_error_message(report, "SKILL.md", error ?: strerror(-r));
        }
        if (infer_error) {
                r = lint_report_add(report, LINT_WARNING, ".", NULL, 0,
                                    "dependencies could not be inferred from the scripts: %s", infer_error);
                if (r < 0)
                        return r;
        }
        return skill_deps_lint(NULL, d, report);
}
