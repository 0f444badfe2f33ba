/* `skill lint`'s dependency rules. The metadata keys are checked item by item like the rest of the
 * frontmatter (errors with their line); the advice about what the code uses (undeclared imports,
 * unpinned requirements) needs discovery's result and is only ever a warning. */
#include "deps.h"
#include "deps-internal.h"
#include "error.h"
#include "parse-util.h"

/* Splits "file:line" as discovery writes where. */
static int where_split(const char *where, char **ret_file, unsigned *ret_line) {
        const char *colon = where ? strrchr(where, ':') : NULL;
        unsigned line = 0;
        char *file;

        if (colon && safe_atou(colon + 1, &line) >= 0)
                file = strndup(where, colon - where);
        else {
                file = strdup(strempty(where));
                line = 0;
        }
        if (!file)
                return -ENOMEM;
        *ret_file = file;
        *ret_line = line;
        return 0;
}

static int lint_metadata_keys(const Skill *s, LintReport *report) {
        for (size_t i = 0; s && i < s->n_metadata_fields; i++) {
                const SkillField *f = &s->metadata_fields[i];
                _cleanup_free_ char *key = NULL, *error = NULL;
                SkillDep *items = NULL;
                size_t n_items = 0;
                DepEcosystem e;
                int r;

                e = DEP_ECOSYSTEM_PYTHON;
                while (e < _DEP_ECOSYSTEM_MAX && !streq_ptr(deps_metadata_key(e), f->key))
                        e++;
                /* Other kinds than strings are the general metadata rule's error already. */
                if (e >= _DEP_ECOSYSTEM_MAX || f->kind != SKILL_VALUE_STRING || !f->value)
                        continue;
                key = strdup_printf("metadata.%s", f->key);
                if (!key)
                        return -ENOMEM;
                if (isempty(f->value) || strspn(f->value, " \t\n") == strlen(f->value)) {
                        r = lint_report_add(report, LINT_WARNING, s->md_filename, key, f->line,
                                            "is empty; list space-separated names or remove the key");
                        if (r < 0)
                                return r;
                        continue;
                }
                r = deps_parse_metadata_value(f->value, e, "", &items, &n_items, &error);
                for (size_t j = 0; j < n_items; j++)
                        skill_dep_done(&items[j]);
                free(items);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        /* The message starts with the empty where: ": what". */
                        const char *m = error ? startswith(error, ": ") ?: error : "is invalid";

                        r = lint_report_add(report, LINT_ERROR, s->md_filename, key, f->line, "%s", m);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static const char *declaration_hint(const SkillDeps *d, DepEcosystem e) {
        if (e == DEP_ECOSYSTEM_PYTHON && d->requirements_file)
                return d->requirements_file;
        if (e == DEP_ECOSYSTEM_NODE && d->package_json)
                return d->package_json;
        return e == DEP_ECOSYSTEM_PYTHON ? "requirements.txt or metadata.python-packages" :
                "package.json or metadata.node-packages";
}

static int lint_dep(const SkillDeps *d, const SkillDep *x, LintReport *report) {
        _cleanup_free_ char *file = NULL;
        unsigned line;
        int r;

        r = where_split(x->where, &file, &line);
        if (r < 0)
                return r;
        if (x->origin == DEP_ORIGIN_INFERRED) {
                if (x->declared || x->vendored || !d->declares)
                        return 0;
                return lint_report_add(report, LINT_WARNING, file, NULL, line,
                                       "imports '%s' (%s %s), which the skill does not declare; add it to %s",
                                       strna(x->module), dep_ecosystem_to_string(x->ecosystem), x->name,
                                       declaration_hint(d, x->ecosystem));
        }
        if (x->pinned || (x->ecosystem != DEP_ECOSYSTEM_PYTHON && x->ecosystem != DEP_ECOSYSTEM_NODE))
                return 0;
        if (x->ecosystem == DEP_ECOSYSTEM_NODE && x->origin == DEP_ORIGIN_FRONTMATTER)
                return lint_report_add(report, LINT_WARNING, file, NULL, line,
                                       "%s is not pinned; write %s@VERSION so every build gets the same version",
                                       x->name, x->name);
        if (x->ecosystem == DEP_ECOSYSTEM_NODE)
                return lint_report_add(report, LINT_WARNING, file, NULL, line,
                                       "%s is not pinned: %s; commit a package-lock.json (npm install "
                                       "--package-lock-only) so every build gets the same version",
                                       x->name, d->package_lock ? "the lockfile does not list it" :
                                       "there is no package-lock.json");
        return lint_report_add(report, LINT_WARNING, file, NULL, line,
                               "%s is not pinned (%s); write %s==VERSION so every build gets the same version",
                               x->name, x->spec ? x->spec : "any version", x->name);
}

int skill_deps_lint(const Skill *s, const SkillDeps *d, LintReport *report) {
        int r;

        if (!report)
                return -EINVAL;
        r = lint_metadata_keys(s, report);
        if (r < 0)
                return r;
        for (size_t i = 0; d && i < d->n; i++) {
                r = lint_dep(d, &d->items[i], report);
                if (r < 0)
                        return r;
        }
        return 0;
}
