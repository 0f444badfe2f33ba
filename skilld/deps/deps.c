/* Discovery: which declaration files a skill has, what its frontmatter declares, and (when asked)
 * what its code imports, merged into one list that `skill show`, `skill lint` and the environment
 * builder share. */
#include <sys/stat.h>

#include "deps.h"
#include "deps-internal.h"
#include "error.h"
#include "fileio.h"
#include "string-table.h"

static const char * const ecosystem_table[_DEP_ECOSYSTEM_MAX] = {
        [DEP_ECOSYSTEM_PYTHON]  = "python",
        [DEP_ECOSYSTEM_NODE]    = "node",
        [DEP_ECOSYSTEM_SYSTEM]  = "system",
        [DEP_ECOSYSTEM_COMMAND] = "command",
};

DEFINE_STRING_TABLE_LOOKUP(dep_ecosystem, DepEcosystem, ecosystem_table);

static const char * const origin_table[_DEP_ORIGIN_MAX] = {
        [DEP_ORIGIN_FILE]        = "file",
        [DEP_ORIGIN_FRONTMATTER] = "frontmatter",
        [DEP_ORIGIN_INFERRED]    = "inferred",
};

DEFINE_STRING_TABLE_LOOKUP(dep_origin, DepOrigin, origin_table);

static const char * const metadata_key_table[_DEP_ECOSYSTEM_MAX] = {
        [DEP_ECOSYSTEM_PYTHON]  = "python-packages",
        [DEP_ECOSYSTEM_NODE]    = "node-packages",
        [DEP_ECOSYSTEM_SYSTEM]  = "system-packages",
        [DEP_ECOSYSTEM_COMMAND] = "required-commands",
};

const char *deps_metadata_key(DepEcosystem e) {
        return string_table_to_string(metadata_key_table, ELEMENTSOF(metadata_key_table), e);
}

bool skill_deps_metadata_key_is_known(const char *key) {
        return string_table_from_string(metadata_key_table, ELEMENTSOF(metadata_key_table), key) >= 0;
}

SkillDeps *skill_deps_free(SkillDeps *d) {
        if (!d)
                return NULL;
        for (size_t i = 0; i < d->n; i++)
                skill_dep_done(&d->items[i]);
        free(d->items);
        free(d->requirements_file);
        free(d->package_json);
        free(d->package_lock);
        strv_free(d->unparsed);
        free(d);
        return NULL;
}

/* Reads a declaration file at "<dir>/<name>" (dir "" for the root) without following links;
 * 0 with *ret NULL if it does not exist. */
static int read_declaration(int dir_fd, const char *dir, const char *name, char **ret_path, char **ret,
                            size_t *ret_size, char **error) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        _cleanup_close_ int sub_fd = -EBADF;
        int fd = dir_fd, r;
        size_t size;

        path = isempty(dir) ? strdup(name) : strdup_printf("%s/%s", dir, name);
        if (!path)
                return -ENOMEM;
        if (!isempty(dir)) {
                sub_fd = openat(dir_fd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub_fd < 0) {
                        if (errno == ENOENT || errno == ENOTDIR)
                                goto missing;
                        return error_setf(error, -errno, "%s: cannot open: %m", dir);
                }
                fd = sub_fd;
        }
        r = read_full_file_at(fd, name, DEPS_FILE_MAX, true, &text, &size);
        if (r == -ENOENT)
                goto missing;
        if (r == -EFBIG)
                return error_setf(error, r, "%s: larger than %u bytes", path, DEPS_FILE_MAX);
        if (r == -ELOOP)
                return error_setf(error, r, "%s: symlinks are not allowed", path);
        if (r < 0)
                return error_setf(error, r, "%s: cannot read: %s", path, strerror(-r));
        *ret_path = TAKE_PTR(path);
        *ret = TAKE_PTR(text);
        *ret_size = size;
        return 1;

missing:
        *ret_path = NULL;
        *ret = NULL;
        *ret_size = 0;
        return 0;
}

/* The one file of that name at the root or in scripts/; two is an error. */
static int find_declaration(int dir_fd, const char *name, char **ret_path, char **ret, size_t *ret_size,
                            char **error) {
        _cleanup_free_ char *root_path = NULL, *root_text = NULL, *sub_path = NULL, *sub_text = NULL;
        size_t root_size, sub_size;
        int r;

        r = read_declaration(dir_fd, "", name, &root_path, &root_text, &root_size, error);
        if (r < 0)
                return r;
        r = read_declaration(dir_fd, "scripts", name, &sub_path, &sub_text, &sub_size, error);
        if (r < 0)
                return r;
        if (root_text && sub_text)
                return error_setf(error, -EEXIST, "%s and %s: a skill declares its dependencies in one of them; "
                                  "merge them into one", root_path, sub_path);
        if (sub_text) {
                *ret_path = TAKE_PTR(sub_path);
                *ret = TAKE_PTR(sub_text);
                *ret_size = sub_size;
                return 1;
        }
        *ret_size = root_text ? root_size : 0;
        *ret_path = TAKE_PTR(root_path);
        *ret = TAKE_PTR(root_text);
        return *ret ? 1 : 0;
}

static int discover_files(int dir_fd, SkillDeps *d, char **error) {
        _cleanup_free_ char *req_path = NULL, *req = NULL, *pkg_path = NULL, *pkg = NULL, *lock = NULL;
        size_t req_size, pkg_size, lock_size = 0;
        int r;

        r = find_declaration(dir_fd, "requirements.txt", &req_path, &req, &req_size, error);
        if (r < 0)
                return r;
        if (req) {
                r = deps_parse_requirements(req, req_size, req_path, &d->items, &d->n, error);
                if (r < 0)
                        return r;
                d->requirements_file = TAKE_PTR(req_path);
                d->declares = true;
        }

        r = find_declaration(dir_fd, "package.json", &pkg_path, &pkg, &pkg_size, error);
        if (r < 0)
                return r;
        if (pkg) {
                _cleanup_free_ char *lock_path = NULL, *dir = NULL;
                const char *slash = strrchr(pkg_path, '/');

                dir = slash ? strndup(pkg_path, slash - pkg_path) : strdup("");
                if (!dir)
                        return -ENOMEM;
                r = read_declaration(dir_fd, dir, "package-lock.json", &lock_path, &lock, &lock_size, error);
                if (r < 0)
                        return r;
                r = deps_parse_package_json(pkg, pkg_size, pkg_path, lock, lock_size, lock_path, &d->items, &d->n,
                                            error);
                if (r < 0)
                        return r;
                d->package_json = TAKE_PTR(pkg_path);
                d->package_lock = TAKE_PTR(lock_path);
                d->declares = true;
        }
        return 0;
}

static int discover_frontmatter(const Skill *s, SkillDeps *d, char **error) {
        if (!s)
                return 0;
        for (size_t i = 0; i < s->n_metadata_fields; i++) {
                const SkillField *f = &s->metadata_fields[i];
                _cleanup_free_ char *where = NULL;
                DepEcosystem e;
                int r;

                e = (DepEcosystem) string_table_from_string(metadata_key_table, ELEMENTSOF(metadata_key_table),
                                                            f->key);
                if (e < 0)
                        continue;
                where = strdup_printf("%s:%u", s->md_filename ?: "SKILL.md", f->line);
                if (!where)
                        return -ENOMEM;
                if (f->kind != SKILL_VALUE_STRING && f->kind != SKILL_VALUE_NULL)
                        return error_setf(error, -EBADMSG, "%s: metadata.%s must be a string of space-separated "
                                          "names, found a %s", where, f->key, skill_value_kind_to_string(f->kind));
                d->declares = true;
                if (!f->value)
                        continue;
                r = deps_parse_metadata_value(f->value, e, where, &d->items, &d->n, error);
                if (r == -E2BIG)
                        return error_setf(error, r, "%s: more than %u dependencies", where, DEPS_MAX);
                if (r < 0)
                        return r;
        }
        return 0;
}

int skill_deps_discover(int dir_fd, const Skill *skill, const SkillDepsOptions *opts, SkillDeps **ret,
                        char **error) {
        _cleanup_(skill_deps_freep) SkillDeps *d = NULL;
        SkillDepsOptions defaults = SKILL_DEPS_OPTIONS_INIT;
        int r;

        if (dir_fd < 0 || !ret)
                return -EINVAL;
        if (!opts)
                opts = &defaults;

        d = calloc(1, sizeof(SkillDeps));
        if (!d)
                return -ENOMEM;
        r = discover_files(dir_fd, d, error);
        if (r >= 0)
                r = discover_frontmatter(skill, d, error);
        if (r >= 0 && opts->infer)
                r = deps_infer(dir_fd, opts, d, error);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(d);
        return 0;
}

int skill_deps_needed(const SkillDeps *d, DepEcosystem e, const SkillDep ***ret) {
        _cleanup_free_ const SkillDep **l = NULL;
        size_t n = 0;

        if (!d)
                return 0;
        if (ret) {
                l = calloc(d->n + 1, sizeof(SkillDep *));
                if (!l)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < d->n; i++) {
                const SkillDep *x = &d->items[i];

                if (x->ecosystem != e || (x->origin == DEP_ORIGIN_INFERRED && (x->declared || x->vendored)))
                        continue;
                if (l)
                        l[n] = x;
                n++;
        }
        if (ret)
                *ret = TAKE_PTR(l);
        return (int) n;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

static int json_add_string(cJSON *o, const char *key, const char *value) {
        cJSON *v = value ? cJSON_CreateString(value) : cJSON_CreateNull();

        if (!v || !cJSON_AddItemToObject(o, key, v)) {
                cJSON_Delete(v);
                return -ENOMEM;
        }
        return 0;
}

static int json_add_bool(cJSON *o, const char *key, bool value) {
        return cJSON_AddBoolToObject(o, key, value) ? 0 : -ENOMEM;
}

static int dep_to_json(const SkillDep *x, cJSON **ret) {
        _cleanup_(cJSON_Deletep) cJSON *o = cJSON_CreateObject();
        int r;

        if (!o)
                return -ENOMEM;
        r = json_add_string(o, "ecosystem", dep_ecosystem_to_string(x->ecosystem));
        if (r >= 0)
                r = json_add_string(o, "name", x->name);
        if (r >= 0)
                r = json_add_string(o, "spec", x->spec);
        if (r >= 0)
                r = json_add_string(o, "extras", x->extras);
        if (r >= 0)
                r = json_add_string(o, "marker", x->marker);
        if (r >= 0)
                r = json_add_string(o, "version", x->version);
        if (r >= 0)
                r = json_add_string(o, "module", x->module);
        if (r >= 0)
                r = json_add_string(o, "origin", dep_origin_to_string(x->origin));
        if (r >= 0)
                r = json_add_string(o, "where", x->where);
        if (r >= 0)
                r = json_add_bool(o, "pinned", x->pinned);
        if (r >= 0)
                r = json_add_bool(o, "declared", x->declared);
        if (r >= 0)
                r = json_add_bool(o, "vendored", x->vendored);
        if (r >= 0)
                r = json_add_bool(o, "optional", x->optional);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

int skill_deps_to_json(const SkillDeps *d, cJSON **ret) {
        _cleanup_(cJSON_Deletep) cJSON *o = cJSON_CreateObject();
        cJSON *list, *unparsed;
        int r;

        if (!o || !d)
                return -ENOMEM;
        r = json_add_bool(o, "declared", d->declares);
        if (r >= 0)
                r = json_add_bool(o, "inferred", d->inferred);
        if (r >= 0)
                r = json_add_string(o, "requirements_file", d->requirements_file);
        if (r >= 0)
                r = json_add_string(o, "package_json", d->package_json);
        if (r >= 0)
                r = json_add_string(o, "package_lock", d->package_lock);
        if (r < 0)
                return r;
        list = cJSON_AddArrayToObject(o, "dependencies");
        if (!list)
                return -ENOMEM;
        for (size_t i = 0; i < d->n; i++) {
                cJSON *x = NULL;

                r = dep_to_json(&d->items[i], &x);
                if (r < 0)
                        return r;
                if (!cJSON_AddItemToArray(list, x)) {
                        cJSON_Delete(x);
                        return -ENOMEM;
                }
        }
        unparsed = cJSON_AddArrayToObject(o, "unparsed");
        if (!unparsed)
                return -ENOMEM;
        STRV_FOREACH(u, d->unparsed) {
                cJSON *s = cJSON_CreateString(*u);

                if (!s || !cJSON_AddItemToArray(unparsed, s)) {
                        cJSON_Delete(s);
                        return -ENOMEM;
                }
        }
        *ret = TAKE_PTR(o);
        return 0;
}
