/* Fuzz target "deps": the dependency declarations a skill brings. The first byte picks the
 * parser, the rest is its input (cut at the first NUL where the real source is a YAML string):
 *   0  requirements.txt
 *   1  package.json, with a package-lock.json after the first "\n---lock---\n" if there is one
 *   2  a python-packages metadata value, 3 node-packages, 4 system-packages, 5 required-commands
 *
 * Promises: a refusal has a documented code (-EBADMSG, -EOPNOTSUPP, -E2BIG, -ENOMEM), a message
 * safe for a terminal that names the file (and, for requirements.txt, a line inside it); what is
 * accepted has the ecosystem parsed for, a non-empty name safe for
 * a terminal (Python names normalized: [a-z0-9-], no doubled or edge hyphens; npm names valid),
 * "where" naming the file and a line inside it, and "pinned" only for an exact version, a lock
 * entry or hashes. No fd leaks. */
#include "deps.h"
#include "deps-internal.h"
#include "fuzz.h"

#define LOCK_SEPARATOR "\n---lock---\n"

static bool code_is_documented(int r) {
        return r == -EBADMSG || r == -EOPNOTSUPP || r == -E2BIG || r == -ENOMEM;
}

static unsigned count_lines(const char *text, size_t size) {
        unsigned n = 1;

        for (size_t i = 0; i < size; i++)
                if (text[i] == '\n')
                        n++;
        return n;
}

/* "FILE:LINE..." with 1 <= LINE <= lines; returns whether it did. */
static bool names_line(const char *m, const char *file, unsigned lines) {
        const char *p = startswith(m, file);
        unsigned line = 0;

        if (!p || *p != ':' || !(p[1] >= '1' && p[1] <= '9'))
                return false;
        for (p++; *p >= '0' && *p <= '9'; p++) {
                fuzz_assert(line < 100000000U);
                line = line * 10 + (unsigned) (*p - '0');
        }
        fuzz_assert(line >= 1 && line <= lines, "line %u of %u: %s", line, lines, m);
        return true;
}

static void check_python_name(const char *n) {
        size_t l = strlen(n);

        fuzz_assert(l > 0 && n[0] != '-' && n[l - 1] != '-' && !strstr(n, "--"), "name '%s'", n);
        for (size_t i = 0; i < l; i++)
                fuzz_assert((n[i] >= 'a' && n[i] <= 'z') || (n[i] >= '0' && n[i] <= '9') || n[i] == '-',
                            "name '%s'", n);
}

static void check_items(const SkillDep *items, size_t n, DepEcosystem e, const char *file, unsigned lines) {
        for (size_t i = 0; i < n; i++) {
                const SkillDep *d = &items[i];

                fuzz_assert(d->ecosystem == e);
                fuzz_assert(d->declared && d->origin != DEP_ORIGIN_INFERRED);
                fuzz_assert(d->name && fuzz_text_is_safe(d->name));
                fuzz_assert(d->where && names_line(d->where, file, lines), "where %s", strna(d->where));
                if (e == DEP_ECOSYSTEM_PYTHON) {
                        check_python_name(d->name);
                        fuzz_assert(!d->spec || fuzz_text_is_safe(d->spec));
                        fuzz_assert(!d->marker || fuzz_text_is_safe(d->marker));
                } else if (e == DEP_ECOSYSTEM_NODE)
                        fuzz_assert(dep_node_name_is_valid(d->name), "npm name '%s'", d->name);
                if (d->pinned && e == DEP_ECOSYSTEM_PYTHON && d->origin == DEP_ORIGIN_FRONTMATTER)
                        fuzz_assert(d->spec && startswith(d->spec, "=="), "pinned without ==: %s", strna(d->spec));
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const DepEcosystem metadata_kinds[] = {
                DEP_ECOSYSTEM_PYTHON, DEP_ECOSYSTEM_NODE, DEP_ECOSYSTEM_SYSTEM, DEP_ECOSYSTEM_COMMAND,
        };
        _cleanup_free_ char *text = NULL, *error = NULL;
        SkillDep *items = NULL;
        size_t n = 0, len;
        const char *file;
        DepEcosystem e;
        unsigned kind;
        int fd_before, r;

        if (size < 1 || size > 256 * 1024)
                return 0;
        kind = data[0] % 6;
        len = size - 1;
        text = malloc(len + 1);
        if (!text)
                return 0;
        memcpy(text, data + 1, len);
        text[len] = '\0';

        fd_before = fuzz_lowest_free_fd();
        if (kind == 0) {
                file = "scripts/requirements.txt";
                e = DEP_ECOSYSTEM_PYTHON;
                r = deps_parse_requirements(text, len, file, &items, &n, &error);
        } else if (kind == 1) {
                char *sep = memmem(text, len, LOCK_SEPARATOR, strlen(LOCK_SEPARATOR));
                size_t pkg_len = sep ? (size_t) (sep - text) : len;
                const char *lock = sep ? sep + strlen(LOCK_SEPARATOR) : NULL;

                file = "package.json";
                e = DEP_ECOSYSTEM_NODE;
                r = deps_parse_package_json(text, pkg_len, file, lock, lock ? len - (lock - text) : 0,
                                            "package-lock.json", &items, &n, &error);
                /* A line of package.json is all "where" may name. */
                len = pkg_len;
        } else {
                file = "SKILL.md:1";
                e = metadata_kinds[kind - 2];
                len = strlen(text);
                r = deps_parse_metadata_value(text, e, file, &items, &n, &error);
        }
        fuzz_assert(fuzz_lowest_free_fd() == fd_before, "fd leaked");

        if (r < 0) {
                fuzz_assert(code_is_documented(r), "undocumented code %d: %s", r, strna(error));
                if (r != -ENOMEM) {
                        fuzz_assert(error && fuzz_text_is_safe(error), "unsafe or missing message: %s",
                                    strna(error));
                        fuzz_assert(startswith(error, kind >= 2 ? "SKILL.md" : file) ||
                                    (kind == 1 && startswith(error, "package-lock.json")),
                                    "message names no file: %s", error);
                        if (kind == 0 && !startswith(error, "scripts/requirements.txt: "))
                                fuzz_assert(names_line(error, file, count_lines(text, len)), "no line: %s", error);
                }
        } else
                check_items(items, n, e, kind >= 2 ? "SKILL.md" : file,
                            kind >= 2 ? 1 : count_lines(text, len));

        for (size_t i = 0; i < n; i++)
                skill_dep_done(&items[i]);
        free(items);
        return 0;
}
