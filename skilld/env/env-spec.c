/* The spec of an environment: what skilld/deps found a skill to need, put in one canonical form,
 * and the id that names it. Only what decides the contents of the built tree goes into the id;
 * the skill's path and code never do, so edits reuse an environment and equal needs share one. */
#include <limits.h>
#include <stdlib.h>
#include <sys/utsname.h>

#include "env.h"
#include "error.h"
#include "fileio.h"
#include "hash.h"
#include "parse-util.h"
#include "string-table.h"

static const char * const resolver_table[_ENV_RESOLVER_MAX] = {
        [ENV_RESOLVER_DEBIAN] = "debian",
        [ENV_RESOLVER_PIP]    = "pip",
        [ENV_RESOLVER_NPM]    = "npm",
};

DEFINE_STRING_TABLE_LOOKUP(env_resolver, EnvResolver, resolver_table);

EnvSpec *env_spec_free(EnvSpec *s) {
        if (!s)
                return NULL;
        strv_free(s->python);
        strv_free(s->python_names);
        strv_free(s->system);
        strv_free(s->node);
        free(s->requirements);
        free(s->package_json);
        free(s->package_lock);
        free(s->python_tag);
        free(s->node_tag);
        free(s->arch);
        free(s->pip_index_url);
        strv_free(s->pip_find_links);
        free(s->npm_registry);
        free(s);
        return NULL;
}

bool env_spec_is_empty(const EnvSpec *s) {
        return !s || (strv_length(s->python) == 0 && strv_length(s->system) == 0 && !s->package_json &&
                      strv_length(s->node) == 0);
}

/* "python3.11 cpython-311": the interpreter's version and the ABI its compiled modules are built
 * for, read from the name the python3 link resolves to, so a run pays no interpreter start. */
static int python_tag(const char *python, char **ret) {
        char path[PATH_MAX];
        _cleanup_free_ char *digits = NULL;
        const char *base, *v, *dot;
        unsigned major, minor;

        if (!realpath(python, path))
                return -errno;
        base = strrchr(path, '/');
        base = base ? base + 1 : path;
        v = startswith(base, "python");
        if (!v)
                return -EINVAL;
        dot = strchr(v, '.');
        if (!dot || dot == v)
                return -EINVAL;
        digits = strndup(v, (size_t) (dot - v));
        if (!digits)
                return -ENOMEM;
        if (safe_atou(digits, &major) < 0 || safe_atou(dot + 1, &minor) < 0)
                return -EINVAL;
        *ret = strdup_printf("python%u.%u cpython-%u%u", major, minor, major, minor);
        return *ret ? 0 : -ENOMEM;
}

static char *requirement_line(const SkillDep *d) {
        return strdup_printf("%s%s%s%s%s%s%s", d->name, d->extras ? "[" : "", strempty(d->extras),
                             d->extras ? "]" : "", strempty(d->spec), d->marker ? "; " : "",
                             strempty(d->marker));
}

static int read_skill_file(int dir_fd, const char *path, char **ret, char **error) {
        int r;

        r = read_full_file_at(dir_fd, path, DEPS_FILE_MAX, true, ret, NULL);
        if (r < 0)
                return error_setf(error, r, "%s: cannot read: %s", path, strerror(-r));
        return 0;
}

/* Sorts names and drops repeats, keeping lines (same order as names) in step. */
static void sort_unique_pairs(char **names, char **lines) {
        size_t n = strv_length(names), j = 0;

        for (size_t i = 1; i < n; i++)
                for (size_t k = i; k > 0 && strcmp(names[k - 1], names[k]) > 0; k--) {
                        char *t = names[k - 1];
                        names[k - 1] = names[k];
                        names[k] = t;
                        t = lines[k - 1];
                        lines[k - 1] = lines[k];
                        lines[k] = t;
                }
        for (size_t i = 0; i < n; i++) {
                if (j > 0 && streq(names[j - 1], names[i])) {
                        free(names[i]);
                        free(lines[i]);
                        continue;
                }
                names[j] = names[i];
                lines[j] = lines[i];
                j++;
        }
        names[j] = lines[j] = NULL;
}

static int spec_canonical(const EnvSpec *s, bool sources, char **ret) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        fprintf(f, "skilld-environment %s\narch %s\n", ENV_BUILDER_VERSION, s->arch);
        if (sources) {
                (void) fputs("resolvers", f);
                for (size_t i = 0; i < s->options.n_resolvers; i++)
                        fprintf(f, "%s%s", i ? "," : " ", env_resolver_to_string(s->options.resolvers[i]));
                (void) fputc('\n', f);
        }
        if (s->python_tag)
                fprintf(f, "python %s\n", s->python_tag);
        if (s->python_tag && sources)
                fprintf(f, "pip-index %s\n", strna(s->pip_index_url));
        /* Only when there are any, so environments built before wheelhouses keep their ids. */
        if (s->python_tag && sources)
                STRV_FOREACH(l, s->pip_find_links)
                        fprintf(f, "pip-find-links %s\n", *l);
        STRV_FOREACH(l, s->python)
                fprintf(f, "requires %s\n", *l);
        STRV_FOREACH(l, s->system)
                fprintf(f, "system %s\n", *l);
        if (s->requirements) {
                char hex[SHA256_HEX_SIZE];

                if (sha256_buffer_hex(s->requirements, strlen(s->requirements), hex) >= 0)
                        fprintf(f, "requirements-sha256 %s\n", hex);
        }
        if (s->node_tag)
                fprintf(f, "node %s\n", s->node_tag);
        STRV_FOREACH(l, s->node)
                fprintf(f, "npm %s\n", *l);
        if (s->package_json) {
                char hex[SHA256_HEX_SIZE];

                if (sha256_buffer_hex(s->package_json, strlen(s->package_json), hex) >= 0)
                        fprintf(f, "package-json-sha256 %s\n", hex);
                if (s->package_lock && sha256_buffer_hex(s->package_lock, strlen(s->package_lock), hex) >= 0)
                        fprintf(f, "package-lock-sha256 %s\n", hex);
        }
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = TAKE_PTR(text);
        return 0;
}

int env_spec_new(const SkillDeps *deps, int dir_fd, const EnvOptions *o, EnvSpec **ret, char **error) {
        _cleanup_(env_spec_freep) EnvSpec *s = NULL;
        _cleanup_free_ const SkillDep **py = NULL, **sys = NULL, **node = NULL;
        _cleanup_free_ char *canonical = NULL;
        struct utsname u;
        int n_py, n_sys, n_node, r;

        n_py = skill_deps_needed(deps, DEP_ECOSYSTEM_PYTHON, &py);
        if (n_py < 0)
                return n_py;
        n_sys = skill_deps_needed(deps, DEP_ECOSYSTEM_SYSTEM, &sys);
        if (n_sys < 0)
                return n_sys;
        n_node = skill_deps_needed(deps, DEP_ECOSYSTEM_NODE, &node);
        if (n_node < 0)
                return n_node;
        if (n_py == 0 && n_sys == 0 && n_node == 0 && !(deps && deps->package_json)) {
                *ret = NULL;
                return 0;
        }

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->options = o ? *o : ENV_OPTIONS_INIT;
        if (s->options.n_resolvers > _ENV_RESOLVER_MAX)
                return -EINVAL;
        if (s->options.pip_index_url && !(s->pip_index_url = strdup(s->options.pip_index_url)))
                return -ENOMEM;
        if (s->options.npm_registry && !(s->npm_registry = strdup(s->options.npm_registry)))
                return -ENOMEM;
        STRV_FOREACH(l, s->options.pip_find_links) {
                if (!env_find_links_is_valid(*l))
                        return error_setf(error, -EINVAL,
                                          "'%s' is not a wheelhouse pip can be given: an absolute path or an "
                                          "http:// or https:// URL, without spaces, quotes or backslashes", *l);
                if (!strv_contains(s->pip_find_links, *l) && (r = strv_extend(&s->pip_find_links, *l)) < 0)
                        return r;
        }
        s->options.pip_index_url = s->pip_index_url;
        s->options.pip_find_links = s->pip_find_links;
        s->options.npm_registry = s->npm_registry;

        s->required = n_sys > 0 || n_node > 0 || deps->package_json;
        for (int i = 0; i < n_py; i++) {
                char *line = requirement_line(py[i]);

                s->required = s->required || !py[i]->optional;
                r = line ? strv_push(&s->python, line) : -ENOMEM;
                if (r >= 0)
                        r = strv_extend(&s->python_names, py[i]->name);
                if (r < 0)
                        return r;
        }
        if (s->python)
                sort_unique_pairs(s->python_names, s->python);
        for (int i = 0; i < n_sys; i++)
                if (!strv_contains(s->system, sys[i]->name) && (r = strv_extend(&s->system, sys[i]->name)) < 0)
                        return r;
        strv_sort(s->system);
        for (int i = 0; i < n_node; i++)
                if (!strv_contains(s->node, node[i]->name) && (r = strv_extend(&s->node, node[i]->name)) < 0)
                        return r;
        strv_sort(s->node);

        /* pip honours hashes only from the file as written: then it goes to pip whole. */
        if (deps->requirements_file) {
                _cleanup_free_ char *text = NULL;

                r = read_skill_file(dir_fd, deps->requirements_file, &text, error);
                if (r < 0)
                        return r;
                if (strstr(text, "--hash"))
                        s->requirements = TAKE_PTR(text);
        }
        if (deps->package_json) {
                r = read_skill_file(dir_fd, deps->package_json, &s->package_json, error);
                if (r < 0)
                        return r;
                if (deps->package_lock) {
                        r = read_skill_file(dir_fd, deps->package_lock, &s->package_lock, error);
                        if (r < 0)
                                return r;
                }
        }
        s->node_without_lock = (n_node > 0 || s->package_json) && !s->package_lock;

        if (n_py > 0) {
                r = python_tag(s->options.python ?: "/usr/bin/python3", &s->python_tag);
                if (r < 0)
                        return error_setf(error, r, "Cannot tell the version of %s: %s",
                                          s->options.python ?: "/usr/bin/python3", strerror(-r));
        }
        if (n_node > 0 || s->package_json) {
                s->node_tag = strdup("node");
                if (!s->node_tag)
                        return -ENOMEM;
        }
        if (uname(&u) < 0)
                return -errno;
        s->arch = strdup(u.machine);
        if (!s->arch)
                return -ENOMEM;

        r = spec_canonical(s, true, &canonical);
        if (r >= 0)
                r = sha256_buffer_hex(canonical, strlen(canonical), s->id);
        free(canonical);
        canonical = NULL;
        if (r >= 0)
                r = spec_canonical(s, false, &canonical);
        if (r >= 0)
                r = sha256_buffer_hex(canonical, strlen(canonical), s->needs_id);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(s);
        return 0;
}

bool env_find_links_is_valid(const char *s) {
        if (isempty(s) || strlen(s) > 2048 || strpbrk(s, " \t\n\r\"'\\"))
                return false;
        for (const char *c = s; *c; c++)
                if ((unsigned char) *c < 0x20 || *c == 0x7f)
                        return false;
        return s[0] == '/' || startswith(s, "http://") || startswith(s, "https://");
}

int env_spec_canonical(const EnvSpec *s, char **ret) {
        return spec_canonical(s, true, ret);
}

/* The Debian candidates for one distribution. dh-python's table is Debian's own record of which
 * binary package ships which distribution (Pillow -> python3-pil, PyYAML -> python3-yaml); its
 * names are as upstream spells them, so both sides are compared normalized. */
int env_debian_candidates(const char *distribution, const char *fallback_table, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        const char *rest;
        int r;

        f = fopen(fallback_table ?: ENV_DH_PYTHON_TABLE, "re");
        while (f && getline(&line, &cap, f) > 0) {
                _cleanup_free_ char *norm = NULL;
                char *sp, *pkg;

                if (line[0] == '#')
                        continue;
                sp = strchr(line, ' ');
                if (!sp)
                        continue;
                *sp = '\0';
                pkg = sp + 1;
                pkg[strcspn(pkg, " \n")] = '\0';
                norm = dep_python_normalize(line);
                if (!norm)
                        return -ENOMEM;
                if (streq(norm, distribution) && !isempty(pkg) && !strv_contains(l, pkg)) {
                        r = strv_extend(&l, pkg);
                        if (r < 0)
                                return r;
                }
        }

        {
                _cleanup_free_ char *p = strdup_printf("python3-%s", distribution);

                if (!p)
                        return -ENOMEM;
                if (!strv_contains(l, p) && (r = strv_push(&l, TAKE_PTR(p))) < 0)
                        return r;
        }
        rest = startswith(distribution, "python-");
        if (rest) {
                _cleanup_free_ char *p = strdup_printf("python3-%s", rest);

                if (!p)
                        return -ENOMEM;
                if (!strv_contains(l, p) && (r = strv_push(&l, TAKE_PTR(p))) < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

int env_cache_dir(bool system, char **ret) {
        const char *xdg, *home;

        if (system) {
                /* Tests point the service and skillctl --system elsewhere; systemd never sets it. */
                const char *dir = secure_getenv("SKILLD_ENV_CACHE_DIR");

                *ret = strdup(!isempty(dir) && dir[0] == '/' ? dir : "/var/cache/skilld/envs");
                return *ret ? 0 : -ENOMEM;
        }
        xdg = getenv("XDG_CACHE_HOME");
        if (!isempty(xdg) && xdg[0] == '/')
                *ret = strdup_printf("%s/skilld/envs", xdg);
        else {
                home = getenv("HOME");
                if (isempty(home) || home[0] != '/')
                        return -ENXIO;
                *ret = strdup_printf("%s/.cache/skilld/envs", home);
        }
        return *ret ? 0 : -ENOMEM;
}

int env_search_paths(char ***ret) {
        /* Debian's multiarch triplet of this build; the plain directories cover the rest. */
#if defined(__x86_64__)
#  define MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#  define MULTIARCH "aarch64-linux-gnu"
#elif defined(__i386__)
#  define MULTIARCH "i386-linux-gnu"
#else
#  define MULTIARCH "unknown-linux-gnu"
#endif
        static const char *const paths[] = {
                /* The environment's own packages first, then (as Python does anyway) the host's;
                 * skilld/ holds the sitecustomize that names a module no source provided. */
                "PYTHONPATH=" ENV_MOUNT "/python:" ENV_MOUNT "/debian/usr/lib/python3/dist-packages:"
                        ENV_MOUNT "/skilld",
                /* Never written at run time: the tree is byte-compiled and read-only. */
                "PYTHONDONTWRITEBYTECODE=1",
                "LD_LIBRARY_PATH=" ENV_MOUNT "/debian/usr/lib/" MULTIARCH ":" ENV_MOUNT "/debian/lib/" MULTIARCH
                        ":" ENV_MOUNT "/debian/usr/lib",
                "NODE_PATH=" ENV_MOUNT "/node/node_modules",
                "PATH=" ENV_MOUNT "/debian/usr/bin:" ENV_MOUNT "/node/node_modules/.bin:"
                        "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        };
        _cleanup_strv_free_ char **l = NULL;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                r = strv_extend(&l, paths[i]);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}
