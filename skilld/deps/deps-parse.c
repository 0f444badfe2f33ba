/* The declaration formats: pip's requirements files (PEP 508 requirements, one per logical line),
 * package.json with its package-lock.json, and the items of the SKILL.md metadata keys. These are
 * parsers of untrusted text: bounded, never recursive, and every refusal names file and line.
 *
 * Of pip's requirements syntax, skilld honours the requirements themselves, per-requirement
 * --hash options and --require-hashes. Everything else pip would follow (nested -r/-c files,
 * editable installs, URLs and local paths, index and find-links options) is refused: where
 * packages come from is the policy's decision, and an environment must be described by the bytes
 * skilld hashes, not by files or servers it never saw. */
#include <ctype.h>

#include "deps.h"
#include "deps-internal.h"
#include "error.h"

#define REQUIREMENT_MAX 4096U
/* Untrusted text quoted in a message: at most SHOWN_MAX bytes of it, escaped for a terminal. */
#define SHOWN_MAX 80U
#define SHOWN_BUF (SHOWN_MAX * 4 + 4)

static const char *shown(char buf[static SHOWN_BUF], const char *s, size_t n) {
        _cleanup_free_ char *cut = NULL, *esc = NULL;

        n = MIN(n, SHOWN_MAX);
        /* cescape() keeps valid UTF-8 as it is: never cut a sequence in half. */
        while (n > 0 && n < strlen(s) && ((unsigned char) s[n] & 0xc0) == 0x80)
                n--;
        cut = strndup(s, n);
        esc = cut ? cescape(cut) : NULL;
        snprintf(buf, SHOWN_BUF, "%s", esc ?: "?");
        return buf;
}
#define SHOWN(buf, s) shown((buf), (s), strlen(s))

/* Text fit to keep and show as it is: UTF-8 without C0, DEL, C1 or layout controls. Whatever a
 * declaration holds that is not is refused, so nothing downstream has to wonder. */
static bool text_is_clean(const char *s) {
        const unsigned char *p = (const unsigned char *) s;
        size_t n = strlen(s);

        if (!utf8_is_valid(s, n) || string_has_cc(s, n) || utf8_has_layout_control(s, n))
                return false;
        for (size_t i = 0; i + 1 < n; i++)
                if (p[i] == 0xc2 && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f)
                        return false;
        return true;
}

void skill_dep_done(SkillDep *d) {
        if (!d)
                return;
        free(d->name);
        free(d->spec);
        free(d->extras);
        free(d->marker);
        free(d->version);
        free(d->module);
        free(d->where);
        *d = (SkillDep) {};
}

int deps_append(SkillDep **items, size_t *n_items, SkillDep *d) {
        SkillDep *a;

        if (*n_items >= DEPS_MAX)
                return -E2BIG;
        a = reallocarray(*items, *n_items + 1, sizeof(SkillDep));
        if (!a)
                return -ENOMEM;
        *items = a;
        a[(*n_items)++] = *d;
        *d = (SkillDep) {};
        return 0;
}

static bool is_name_char(char c) {
        return isalnum((unsigned char) c) || c == '-' || c == '_' || c == '.';
}

static char *strip_dup(const char *s, size_t n) {
        while (n > 0 && isspace((unsigned char) *s))
                s++, n--;
        while (n > 0 && isspace((unsigned char) s[n - 1]))
                n--;
        return strndup(s, n);
}

/* "==1.2.3" and "===1.2.3" name one version; "==1.*" does not. */
static bool spec_is_pinned(const char *spec) {
        const char *v;

        if (!spec || strchr(spec, ','))
                return false;
        v = startswith(spec, "===") ?: startswith(spec, "==");
        if (!v)
                return false;
        while (isspace((unsigned char) *v))
                v++;
        return *v && !strchr(v, '*');
}

/* PEP 440 specifiers: comma-separated clauses of an operator and a version of letters, digits
 * and . * + ! - _ (the versions themselves are the installer's to judge). */
static bool spec_is_valid(const char *spec) {
        static const char * const ops[] = { "===", "==", "!=", "<=", ">=", "~=", "<", ">" };
        const char *p = spec;

        for (;;) {
                size_t n = 0;

                while (isspace((unsigned char) *p))
                        p++;
                for (size_t i = 0; i < ELEMENTSOF(ops) && n == 0; i++)
                        if (startswith(p, ops[i]))
                                n = strlen(ops[i]);
                if (n == 0)
                        return false;
                p += n;
                while (isspace((unsigned char) *p))
                        p++;
                n = 0;
                while (isalnum((unsigned char) p[n]) || (p[n] && strchr(".*+!-_", p[n])))
                        n++;
                if (n == 0)
                        return false;
                p += n;
                while (isspace((unsigned char) *p))
                        p++;
                if (*p == '\0')
                        return true;
                if (*p++ != ',')
                        return false;
        }
}

int deps_parse_requirement(const char *s, SkillDep *ret, char **error) {
        _cleanup_(skill_dep_done) SkillDep d = { .ecosystem = DEP_ECOSYSTEM_PYTHON, .declared = true };
        _cleanup_free_ char *raw_name = NULL;
        const char *p = s, *start, *semi;
        char b[SHOWN_BUF];
        size_t n;

        if (!text_is_clean(s))
                return error_setf(error, -EBADMSG, "'%s': control characters or invalid UTF-8", SHOWN(b, s));
        while (isspace((unsigned char) *p))
                p++;
        start = p;
        if (!isalnum((unsigned char) *p))
                return error_setf(error, -EBADMSG, "'%s' does not start with a package name", SHOWN(b, s));
        while (is_name_char(*p))
                p++;
        if (!isalnum((unsigned char) p[-1]))
                return error_setf(error, -EBADMSG, "'%s': a package name ends with a letter or digit", SHOWN(b, s));
        raw_name = strndup(start, p - start);
        if (!raw_name)
                return -ENOMEM;

        semi = strchr(p, ';');
        n = semi ? (size_t) (semi - p) : strlen(p);
        while (n > 0 && isspace((unsigned char) *p))
                p++, n--;
        if (n > 0 && *p == '[') {
                const char *close = memchr(p, ']', n);

                if (!close)
                        return error_setf(error, -EBADMSG, "'%s': unclosed '[' of the extras", SHOWN(b, s));
                for (const char *q = p + 1; q < close; q++)
                        if (!is_name_char(*q) && *q != ',' && !isspace((unsigned char) *q))
                                return error_setf(error, -EBADMSG, "'%s': invalid extras", SHOWN(b, s));
                d.extras = strip_dup(p + 1, close - p - 1);
                if (!d.extras)
                        return -ENOMEM;
                n -= close + 1 - p;
                p = close + 1;
                while (n > 0 && isspace((unsigned char) *p))
                        p++, n--;
        }
        if (n > 0 && *p == '@')
                return error_setf(error, -EOPNOTSUPP,
                                  "'%s': direct references (name @ URL) are not supported; name a "
                                  "version the configured sources provide", SHOWN(b, s));
        if (n > 0) {
                _cleanup_free_ char *spec = strip_dup(p, n);
                size_t l;

                if (!spec)
                        return -ENOMEM;
                /* The legacy "name (>=1.0)" form. */
                l = strlen(spec);
                if (spec[0] == '(') {
                        if (spec[l - 1] != ')')
                                return error_setf(error, -EBADMSG, "'%s': unclosed '('", SHOWN(b, s));
                        spec[l - 1] = '\0';
                        d.spec = strip_dup(spec + 1, strlen(spec + 1));
                        if (!d.spec)
                                return -ENOMEM;
                } else
                        d.spec = TAKE_PTR(spec);
                if (!spec_is_valid(d.spec))
                        return error_setf(error, -EBADMSG,
                                          "'%s': expected version specifiers (==1.2, >=1,<2, ~=1.4, ...) "
                                          "after the name", SHOWN(b, s));
        }
        if (semi) {
                d.marker = strip_dup(semi + 1, strlen(semi + 1));
                if (!d.marker)
                        return -ENOMEM;
                if (isempty(d.marker))
                        return error_setf(error, -EBADMSG, "'%s': empty environment marker after ';'", SHOWN(b, s));
        }
        d.name = dep_python_normalize(raw_name);
        if (!d.name)
                return -ENOMEM;
        d.pinned = spec_is_pinned(d.spec);
        *ret = d;
        d = (SkillDep) {};
        return 0;
}

/* One logical line (continuations joined): a comment, a blank, an option or a requirement. */
static int requirement_line(SkillDep **items, size_t *n_items, char *line, const char *file, unsigned lineno,
                            char **error) {
        _cleanup_(skill_dep_done) SkillDep d = {};
        _cleanup_free_ char *where = NULL, *req = NULL;
        bool hashes = false;
        char b[SHOWN_BUF];
        char *p, *opt;
        int r;

        where = strdup_printf("%s:%u", file, lineno);
        if (!where)
                return -ENOMEM;

        /* A comment starts at a '#' at the start of the line or after whitespace. */
        for (p = line; *p; p++)
                if (*p == '#' && (p == line || isspace((unsigned char) p[-1]))) {
                        *p = '\0';
                        break;
                }
        p = line;
        while (isspace((unsigned char) *p))
                p++;
        if (*p == '\0')
                return 0;

        if (*p == '-') {
                size_t k = strcspn(p, " \t");

                if (k == strlen("--require-hashes") && startswith(p, "--require-hashes") &&
                    p[k + strspn(p + k, " \t")] == '\0')
                        return 0;
                return error_setf(error, -EOPNOTSUPP,
                                  "%s: the pip option '%s' is not honoured in a skill's requirements; "
                                  "list plain requirements (the package sources are the policy's)", where,
                                  shown(b, p, 40));
        }
        if (strstr(p, "://") || p[0] == '.' || p[0] == '/')
                return error_setf(error, -EOPNOTSUPP, "%s: URLs and paths are not supported as requirements; "
                                  "name a package and version", where);

        /* Per-requirement options: only --hash. */
        opt = strstr(p, " --");
        if (!opt)
                opt = strstr(p, "\t--");
        if (opt) {
                for (char *o = opt; *o; ) {
                        size_t k;

                        while (isspace((unsigned char) *o))
                                o++;
                        if (*o == '\0')
                                break;
                        k = strcspn(o, " \t");
                        if (startswith(o, "--hash=") && k > strlen("--hash="))
                                hashes = true;
                        else if (k == strlen("--hash") && startswith(o, "--hash")) {
                                o += k;
                                while (isspace((unsigned char) *o))
                                        o++;
                                k = strcspn(o, " \t");
                                if (k == 0)
                                        return error_setf(error, -EBADMSG, "%s: --hash without a value", where);
                                hashes = true;
                        } else
                                return error_setf(error, -EOPNOTSUPP, "%s: the option '%s' is not honoured; "
                                                  "only --hash may follow a requirement", where,
                                                  shown(b, o, MIN(k, 40U)));
                        o += k;
                }
                *opt = '\0';
        }
        req = strdup(p);
        if (!req)
                return -ENOMEM;

        {
                _cleanup_free_ char *why = NULL;

                r = deps_parse_requirement(req, &d, &why);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return error_setf(error, r, "%s: %s", where, strna(why));
        }
        d.origin = DEP_ORIGIN_FILE;
        d.pinned = d.pinned || hashes;
        d.where = TAKE_PTR(where);
        return deps_append(items, n_items, &d);
}

int deps_parse_requirements(const char *text, size_t size, const char *file, SkillDep **items, size_t *n_items,
                            char **error) {
        _cleanup_free_ char *logical = NULL;
        size_t logical_len = 0;
        unsigned lineno = 0, start_line = 0;
        const char *p = text, *end = text + size;
        int r;

        if (memchr(text, '\0', size) || !utf8_is_valid(text, size))
                return error_setf(error, -EBADMSG, "%s: not UTF-8 text", file);

        logical = calloc(1, REQUIREMENT_MAX + 1);
        if (!logical)
                return -ENOMEM;

        while (p < end) {
                const char *nl = memchr(p, '\n', end - p);
                size_t len = nl ? (size_t) (nl - p) : (size_t) (end - p);
                bool continued;

                lineno++;
                if (logical_len == 0)
                        start_line = lineno;
                if (len > 0 && p[len - 1] == '\r')
                        len--;
                continued = len > 0 && p[len - 1] == '\\';
                if (continued)
                        len--;
                if (logical_len + len > REQUIREMENT_MAX)
                        return error_setf(error, -EBADMSG, "%s:%u: line longer than %u bytes", file, start_line,
                                          REQUIREMENT_MAX);
                memcpy(logical + logical_len, p, len);
                logical_len += len;
                logical[logical_len] = '\0';
                p = nl ? nl + 1 : end;
                if (continued && p < end) {
                        /* pip joins with nothing in between; keep words apart. */
                        if (logical_len + 1 > REQUIREMENT_MAX)
                                return error_setf(error, -EBADMSG, "%s:%u: line longer than %u bytes", file,
                                                  start_line, REQUIREMENT_MAX);
                        logical[logical_len++] = ' ';
                        logical[logical_len] = '\0';
                        continue;
                }
                for (const char *q = logical; *q; q++)
                        if ((unsigned char) *q < 0x20 && *q != '\t')
                                return error_setf(error, -EBADMSG, "%s:%u: control character", file, start_line);
                r = requirement_line(items, n_items, logical, file, start_line, error);
                if (r == -E2BIG)
                        return error_setf(error, r, "%s: more than %u requirements", file, DEPS_MAX);
                if (r < 0)
                        return r;
                logical_len = 0;
                logical[0] = '\0';
        }
        return 0;
}

static unsigned line_of(const char *text, const char *at) {
        unsigned line = 1;

        for (const char *p = text; p < at; p++)
                if (*p == '\n')
                        line++;
        return line;
}

/* The line of "name" as a key inside the object that starts at the first "section" key; 0 if not
 * found. cJSON keeps no positions, and a textual search is enough to point a person at it. */
static unsigned json_key_line(const char *text, const char *section, const char *name) {
        _cleanup_free_ char *sk = strdup_printf("\"%s\"", section), *nk = strdup_printf("\"%s\"", name);
        const char *s, *k;

        if (!sk || !nk)
                return 0;
        s = strstr(text, sk);
        if (!s)
                return 0;
        k = strstr(s + strlen(sk), nk);
        return k ? line_of(text, k) : line_of(text, s);
}

/* What the lockfile resolved a top-level dependency to: lockfileVersion 2 and 3 list
 * "packages" -> "node_modules/<name>"; version 1 lists "dependencies" -> <name>. */
static const char *lock_version(const cJSON *lock, const char *name) {
        const cJSON *packages, *deps, *e, *v;
        _cleanup_free_ char *key = strdup_printf("node_modules/%s", name);

        if (!lock || !key)
                return NULL;
        packages = cJSON_GetObjectItemCaseSensitive(lock, "packages");
        e = cJSON_IsObject(packages) ? cJSON_GetObjectItemCaseSensitive(packages, key) : NULL;
        if (!e) {
                deps = cJSON_GetObjectItemCaseSensitive(lock, "dependencies");
                e = cJSON_IsObject(deps) ? cJSON_GetObjectItemCaseSensitive(deps, name) : NULL;
        }
        v = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "version") : NULL;
        return v && cJSON_IsString(v) ? v->valuestring : NULL;
}

/* An exact semver: digits.digits.digits with an optional prerelease/build, nothing else. */
static bool node_spec_is_exact(const char *spec) {
        const char *p = spec;

        if (*p == '=')
                p++;
        if (*p == 'v')
                p++;
        for (unsigned part = 0; part < 3; part++) {
                if (!isdigit((unsigned char) *p))
                        return false;
                p += strspn(p, "0123456789");
                if (part < 2 && *p++ != '.')
                        return false;
        }
        if (*p == '-' || *p == '+')
                for (p++; *p; p++)
                        if (!(isalnum((unsigned char) *p) || *p == '.' || *p == '-' || *p == '+'))
                                return false;
        return *p == '\0';
}

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

static int parse_json_object(const char *text, size_t size, const char *file, cJSON **ret, char **error) {
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;

        if (memchr(text, '\0', size) || !utf8_is_valid(text, size))
                return error_setf(error, -EBADMSG, "%s: not UTF-8 text", file);
        j = cJSON_ParseWithLength(text, size);
        if (!j) {
                const char *at = cJSON_GetErrorPtr();

                if (at && at >= text && at <= text + size)
                        return error_setf(error, -EBADMSG, "%s:%u: invalid JSON", file, line_of(text, at));
                return error_setf(error, -EBADMSG, "%s: invalid JSON", file);
        }
        if (!cJSON_IsObject(j))
                return error_setf(error, -EBADMSG, "%s: the top level must be a JSON object", file);
        *ret = TAKE_PTR(j);
        return 0;
}

static int node_section(SkillDep **items, size_t *n_items, const char *text, const cJSON *pkg, const cJSON *lock,
                        const char *file, const char *section, char **error) {
        const cJSON *deps = cJSON_GetObjectItemCaseSensitive(pkg, section), *e;
        int r;

        if (!deps)
                return 0;
        if (!cJSON_IsObject(deps))
                return error_setf(error, -EBADMSG, "%s:%u: \"%s\" must be an object of names and versions", file,
                                  json_key_line(text, section, section), section);
        cJSON_ArrayForEach(e, deps) {
                _cleanup_(skill_dep_done) SkillDep d = {
                        .ecosystem = DEP_ECOSYSTEM_NODE,
                        .origin = DEP_ORIGIN_FILE,
                        .declared = true,
                };
                unsigned line = json_key_line(text, section, e->string);
                char b[SHOWN_BUF];
                const char *v;

                if (!dep_node_name_is_valid(e->string))
                        return error_setf(error, -EBADMSG, "%s:%u: '%s' is not a valid npm package name", file,
                                          line, SHOWN(b, e->string));
                if (!cJSON_IsString(e) || !text_is_clean(e->valuestring))
                        return error_setf(error, -EBADMSG, "%s:%u: the version of %s must be a string of "
                                          "printable text", file, line, SHOWN(b, e->string));
                d.name = strdup(e->string);
                d.spec = isempty(e->valuestring) ? NULL : strdup(e->valuestring);
                d.where = strdup_printf("%s:%u", file, line);
                v = lock_version(lock, e->string);
                if (v && !text_is_clean(v))
                        return error_setf(error, -EBADMSG, "%s:%u: the version the lockfile gives %s is not "
                                          "printable text", file, line, SHOWN(b, e->string));
                if (v)
                        d.version = strdup(v);
                if (!d.name || !d.where || (!isempty(e->valuestring) && !d.spec) || (v && !d.version))
                        return -ENOMEM;
                d.pinned = d.version || (d.spec && node_spec_is_exact(d.spec));
                r = deps_append(items, n_items, &d);
                if (r == -E2BIG)
                        return error_setf(error, r, "%s: more than %u dependencies", file, DEPS_MAX);
                if (r < 0)
                        return r;
        }
        return 0;
}

int deps_parse_package_json(const char *text, size_t size, const char *file, const char *lock_text,
                            size_t lock_size, const char *lock_file, SkillDep **items, size_t *n_items,
                            char **error) {
        _cleanup_(cJSON_Deletep) cJSON *pkg = NULL, *lock = NULL;
        int r;

        r = parse_json_object(text, size, file, &pkg, error);
        if (r < 0)
                return r;
        if (lock_text) {
                r = parse_json_object(lock_text, lock_size, strna(lock_file), &lock, error);
                if (r < 0)
                        return r;
        }
        r = node_section(items, n_items, text, pkg, lock, file, "dependencies", error);
        if (r >= 0)
                r = node_section(items, n_items, text, pkg, lock, file, "optionalDependencies", error);
        return r;
}

/* "name", "name@range", "@scope/name", "@scope/name@range" */
static int parse_node_item(const char *item, SkillDep *d, char **error) {
        const char *at = strchr(item[0] == '@' ? item + 1 : item, '@');
        char b[SHOWN_BUF];

        d->name = at ? strndup(item, at - item) : strdup(item);
        if (!d->name)
                return -ENOMEM;
        if (!dep_node_name_is_valid(d->name))
                return error_setf(error, -EBADMSG, "'%s' is not a valid npm package name", SHOWN(b, d->name));
        if (at && !isempty(at + 1)) {
                if (!text_is_clean(at + 1))
                        return error_setf(error, -EBADMSG, "'%s': control characters or invalid UTF-8",
                                          SHOWN(b, item));
                d->spec = strdup(at + 1);
                if (!d->spec)
                        return -ENOMEM;
                d->pinned = node_spec_is_exact(d->spec);
        }
        return 0;
}

/* Debian package names (Policy 5.6.1): lower case letters, digits, + - . , at least two long,
 * starting with a letter or digit. Command names: no slashes, nothing a shell would interpret. */
static int parse_name_item(const char *item, DepEcosystem e, SkillDep *d, char **error) {
        size_t n = strlen(item);
        char b[SHOWN_BUF];

        if (e == DEP_ECOSYSTEM_SYSTEM) {
                if (n < 2 || !(islower((unsigned char) item[0]) || isdigit((unsigned char) item[0])))
                        return error_setf(error, -EBADMSG, "'%s' is not a Debian package name", SHOWN(b, item));
                for (size_t i = 0; i < n; i++)
                        if (!(islower((unsigned char) item[i]) || isdigit((unsigned char) item[i]) ||
                              strchr("+-.", item[i])))
                                return error_setf(error, -EBADMSG, "'%s' is not a Debian package name "
                                                  "(lower case letters, digits, '+', '-', '.')", SHOWN(b, item));
        } else {
                if (n > 255 || item[0] == '-' || item[0] == '.')
                        return error_setf(error, -EBADMSG, "'%s' is not a command name", SHOWN(b, item));
                for (size_t i = 0; i < n; i++)
                        if (!(isalnum((unsigned char) item[i]) || strchr("+-._", item[i])))
                                return error_setf(error, -EBADMSG, "'%s' is not a command name (a program "
                                                  "found on PATH, without a directory)", SHOWN(b, item));
        }
        d->name = strdup(item);
        return d->name ? 0 : -ENOMEM;
}

int deps_parse_metadata_value(const char *value, DepEcosystem e, const char *where, SkillDep **items,
                              size_t *n_items, char **error) {
        _cleanup_free_ char *copy = strdup(value);
        char *save = NULL;
        int r;

        if (!copy)
                return -ENOMEM;
        for (char *item = strtok_r(copy, " \t\n", &save); item; item = strtok_r(NULL, " \t\n", &save)) {
                _cleanup_(skill_dep_done) SkillDep d = {
                        .ecosystem = e,
                        .origin = DEP_ORIGIN_FRONTMATTER,
                        .declared = true,
                };
                _cleanup_free_ char *why = NULL;
                char b[SHOWN_BUF];

                if (e == DEP_ECOSYSTEM_PYTHON) {
                        if (strstr(item, "://") || item[0] == '.' || item[0] == '/')
                                return error_setf(error, -EOPNOTSUPP, "%s: '%s': URLs and paths are not "
                                                  "supported; name a package", where, SHOWN(b, item));
                        r = deps_parse_requirement(item, &d, &why);
                        d.origin = DEP_ORIGIN_FRONTMATTER;
                } else if (e == DEP_ECOSYSTEM_NODE)
                        r = parse_node_item(item, &d, &why);
                else
                        r = parse_name_item(item, e, &d, &why);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return error_setf(error, r, "%s: %s", where, strna(why));
                d.where = strdup(where);
                if (!d.where)
                        return -ENOMEM;
                r = deps_append(items, n_items, &d);
                if (r < 0)
                        return r;
        }
        return 0;
}
