/* Which skills the MCP server offers, and reading them.
 *
 * Skills come from folders, looked at in the order the server was given (see verb_mcp(): each
 * --skills-dir, then the project's and the user's skill folders), then from the skilld service's
 * installed skills. A folder holds one skill per subfolder, or is itself a skill (has SKILL.md).
 * The first skill of a name wins, so a skill in a closer folder shadows one further away, as
 * PATH lookup does. The catalog is read again for each listing: skills come and go while a
 * client stays connected, and a listing is cheap next to what a client does with it.
 *
 * Files are read as the skill loader reads them: no symlinks followed, the loader's path rules,
 * and the paths packaging leaves out (__pycache__, *.pyc, ...) not offered. */
#include <dirent.h>
#include <math.h>
#include <strings.h>
#include <sys/stat.h>

#include "error.h"
#include "fileio.h"
#include "hash.h"
#include "lint.h"
#include "loader-internal.h"
#include "log.h"
#include "mcp.h"
#include "output.h"

static void mcp_skill_done(McpSkill *k) {
        free(k->name);
        free(k->description);
        free(k->dir);
        free(k->source);
}

void mcp_catalog_done(McpCatalog *c) {
        for (size_t i = 0; i < c->n; i++)
                mcp_skill_done(&c->skills[i]);
        free(c->skills);
        *c = (McpCatalog) {};
}

const McpSkill *mcp_catalog_find(const McpCatalog *c, const char *name) {
        for (size_t i = 0; name && i < c->n; i++)
                if (streq(c->skills[i].name, name))
                        return &c->skills[i];
        return NULL;
}

static int catalog_add(McpCatalog *c, const char *name, const char *description, const char *dir,
                       const char *source, bool installed) {
        McpSkill *l, k = { .installed = installed };

        if (!skill_name_is_valid(name) || mcp_catalog_find(c, name))
                return 0;
        k.name = strdup(name);
        k.description = strdup(strempty(description));
        k.dir = dir ? strdup(dir) : NULL;
        k.source = strdup(source);
        l = reallocarray(c->skills, c->n + 1, sizeof(McpSkill));
        if (!k.name || !k.description || (dir && !k.dir) || !k.source || !l) {
                if (l)
                        c->skills = l;
                mcp_skill_done(&k);
                return -ENOMEM;
        }
        c->skills = l;
        c->skills[c->n++] = k;
        return 1;
}

/* One folder that may be a skill: added when its SKILL.md parses and names a valid skill. */
static int catalog_add_folder(McpCatalog *c, int dir_fd, const char *path, const char *source) {
        _cleanup_(skill_freep) Skill *skill = NULL;
        _cleanup_free_ char *error = NULL;
        int r;

        r = skill_load_at(dir_fd, &skill, &error);
        if (r < 0) {
                log_debug("Not offering %s: %s", path, error ?: strerror(-r));
                return 0;
        }
        if (!skill->name || !skill_name_is_valid(skill->name)) {
                log_debug("Not offering %s: its SKILL.md names no valid skill", path);
                return 0;
        }
        return catalog_add(c, skill->name, skill->description, path, source, false);
}

static int name_cmp(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

static int catalog_add_dir(McpCatalog *c, const char *dir) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_strv_free_ char **names = NULL;
        DIR *d;
        struct dirent *de;
        int r = 0;

        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT || errno == ENOTDIR || errno == EACCES ? 0 : -errno;

        if (faccessat(fd, "SKILL.md", F_OK, AT_SYMLINK_NOFOLLOW) >= 0 ||
            faccessat(fd, "skill.md", F_OK, AT_SYMLINK_NOFOLLOW) >= 0)
                return catalog_add_folder(c, fd, dir, dir);

        d = fdopendir(fcntl(fd, F_DUPFD_CLOEXEC, 3));
        if (!d)
                return -errno;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.' && (r = strv_extend(&names, de->d_name)) < 0)
                        break;
        closedir(d);
        if (r < 0)
                return r;
        if (names)
                qsort(names, strv_length(names), sizeof(char *), name_cmp);

        STRV_FOREACH(n, names) {
                _cleanup_close_ int sub = openat(fd, *n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                _cleanup_free_ char *path = NULL;

                if (sub < 0)
                        continue;
                path = strjoin_path(dir, *n);
                if (!path)
                        return -ENOMEM;
                r = catalog_add_folder(c, sub, path, dir);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Where the files of an installed skill can be read: the administrator's and the packages' folders
 * are world-readable, the service's own (installed through it) is not. Only on this host, and
 * only a folder that still is that skill (the service lists what it found a moment ago). */
static const char *installed_folder(const char *origin, const char *name, char buf[static PATH_MAX]) {
        const char *base = streq(origin, "admin") ? SYSCONFDIR "/skilld/skills" :
                           streq(origin, "vendor") ? PKGDATADIR "/skills" : NULL;
        _cleanup_close_ int fd = -EBADF;
        _cleanup_(skill_freep) Skill *skill = NULL;

        if (!base || arg_host || snprintf(buf, PATH_MAX, "%s/%s", base, name) >= PATH_MAX)
                return NULL;
        fd = open(buf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || skill_load_at(fd, &skill, NULL) < 0 || !streq_ptr(skill->name, name))
                return NULL;
        return buf;
}

static int catalog_add_installed(McpServer *s, McpCatalog *c) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *name, *description, *hash, *origin;
        char folder[PATH_MAX];
        int r;

        if (!s->client)
                return 0;
        r = client_call_method(s->client, SKILLD_BUS_PATH, SKILLD_BUS_MANAGER, "ListSkills", &e, &reply, NULL);
        if (r < 0) {
                /* The folders still count: a listing without the service's skills beats none. */
                log_warning("Cannot list the service's installed skills: %s", e.message ?: strerror(-r));
                return 0;
        }
        r = sym_sd_bus_message_enter_container(reply, 'a', "(ssss)");
        while (r >= 0 && (r = sym_sd_bus_message_read(reply, "(ssss)", &name, &description, &hash, &origin)) > 0) {
                _cleanup_free_ char *source = NULL;

                /* A folder that does not validate has no hash: it cannot run. */
                if (isempty(hash))
                        continue;
                source = strdup_printf("service:%s", origin);
                if (!source)
                        return -ENOMEM;
                r = catalog_add(c, name, description, installed_folder(origin, name, folder), source, true);
        }
        return r < 0 ? r : 0;
}

int mcp_catalog_load(McpServer *s, McpCatalog *ret) {
        _cleanup_(mcp_catalog_done) McpCatalog c = {};
        int r;

        STRV_FOREACH(d, s->search_dirs) {
                r = catalog_add_dir(&c, *d);
                if (r < 0)
                        log_debug_errno(r, "Skipping %s: %m", *d);
        }
        r = catalog_add_installed(s, &c);
        if (r < 0)
                return r;
        *ret = c;
        c = (McpCatalog) {};
        return 0;
}

void mcp_files_free(McpFile *f, size_t n) {
        for (size_t i = 0; f && i < n; i++)
                free(f[i].path);
        free(f);
}

static int open_skill_dir(const McpSkill *k, char **error) {
        int fd;

        if (!k->dir)
                return error_setf(error, -ENOENT,
                                  "%s is installed on the skilld service, which keeps its files to itself", k->name);
        fd = open(k->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return error_setf(error, -errno, "%s: %m", k->dir);
        return fd;
}

int mcp_skill_files(const McpSkill *k, bool hashes, McpFile **ret, size_t *ret_n, char **error) {
        _cleanup_tree_list_ TreeList l = {};
        _cleanup_close_ int fd = -EBADF;
        McpFile *files;
        size_t n = 0;
        int r;

        fd = open_skill_dir(k, error);
        if (fd < 0)
                return fd;
        r = tree_walk(fd, NULL, TREE_WALK_SKIP_EXCLUDED | TREE_WALK_SORT, &l, error);
        if (r < 0)
                return r;
        files = calloc(MAX(l.n, 1U), sizeof(McpFile));
        if (!files)
                return -ENOMEM;
        for (size_t i = 0; i < l.n; i++) {
                McpFile *f = &files[n];

                if (l.entries[i].type != S_IFREG)
                        continue;
                f->path = strdup(l.entries[i].path);
                if (!f->path) {
                        mcp_files_free(files, n);
                        return -ENOMEM;
                }
                n++;
                f->size = l.entries[i].size;
                if (hashes) {
                        _cleanup_close_ int ffd = tree_open_file(fd, f->path, error);
                        uint64_t size;

                        r = ffd < 0 ? ffd : sha256_fd(ffd, f->sha256, &size);
                        if (r < 0) {
                                mcp_files_free(files, n);
                                return error_setf(error, r, "%s/%s: cannot read: %s", k->dir,
                                                  l.entries[i].path, strerror(-r));
                        }
                        /* The size that goes with the digest is the one hashed. */
                        f->size = size;
                }
        }
        *ret = files;
        *ret_n = n;
        return 0;
}

int mcp_skill_load(const McpSkill *k, Skill **ret, char **error) {
        _cleanup_close_ int fd = open_skill_dir(k, error);

        if (fd < 0)
                return fd;
        return skill_load_at(fd, ret, error);
}

int mcp_skill_read(const McpSkill *k, const char *path, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF, ffd = -EBADF;
        struct stat st;

        if (!k->dir)
                return -ENOENT;
        if (loader_check_path(path, NULL, NULL) < 0 || skill_path_is_excluded(path))
                return -EINVAL;
        fd = open(k->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ffd = tree_open_file(fd, path, NULL);
        if (ffd < 0)
                return ffd == -ELOOP || ffd == -ENOTDIR ? -ENOENT : ffd;
        if (fstat(ffd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -ENOENT;
        if ((uint64_t) st.st_size > MCP_RESOURCE_MAX)
                return -EFBIG;
        return read_full_fd(ffd, MCP_RESOURCE_MAX, ret, ret_size);
}

/* A plain YAML scalar as YAML 1.2's core schema reads it (js-yaml, the conformance suite's
 * parser): YAML 1.1's yes/no/on/off stay strings there, and so do timestamps in JSON. */
static cJSON *scalar_json(const char *v, SkillValueKind kind) {
        char *end;
        double d;

        switch (kind) {
        case SKILL_VALUE_NULL:
                return cJSON_CreateNull();
        case SKILL_VALUE_BOOL:
                if (strcasecmp(v, "true") == 0 || strcasecmp(v, "false") == 0)
                        return cJSON_CreateBool(strcasecmp(v, "true") == 0);
                return cJSON_CreateString(v);
        case SKILL_VALUE_INT:
        case SKILL_VALUE_FLOAT: {
                const char *digits = v + (v[0] == '-');

                /* A plain decimal integer keeps its digits; others go through a double, as
                 * they would in the client. */
                if (kind == SKILL_VALUE_INT && digits[0] && strspn(digits, "0123456789") == strlen(digits) &&
                    (digits[0] != '0' || !digits[1]))
                        return cJSON_CreateRaw(v);
                errno = 0;
                d = strtod(v, &end);
                if (errno == 0 && *end == '\0' && end != v && isfinite(d))
                        return cJSON_CreateNumber(d);
                return cJSON_CreateString(v);
        }
        case SKILL_VALUE_STRING:
        case SKILL_VALUE_TIMESTAMP:
        case SKILL_VALUE_SEQUENCE:
        case SKILL_VALUE_MAPPING:
        case _SKILL_VALUE_KIND_MAX:
        case _SKILL_VALUE_KIND_INVALID:
        default:
                return cJSON_CreateString(v);
        }
}

cJSON *mcp_frontmatter_json(const Skill *k) {
        _cleanup_(cJSON_Deletep) cJSON *o = cJSON_CreateObject();

        if (!o)
                return NULL;
        for (size_t i = 0; i < k->n_fields; i++) {
                const SkillField *f = &k->fields[i];
                cJSON *v = NULL;

                if (f->is_scalar)
                        v = scalar_json(strempty(f->value), f->kind);
                else if (streq(f->key, "metadata")) {
                        v = cJSON_CreateObject();
                        for (size_t j = 0; v && j < k->n_metadata_fields; j++) {
                                const SkillField *m = &k->metadata_fields[j];

                                /* Nested values are not kept by the skill model. */
                                if (m->is_scalar && !cJSON_AddItemToObject(v, m->key,
                                                                          scalar_json(strempty(m->value), m->kind)))
                                        return NULL;
                        }
                } else if (streq(f->key, "allowed-tools") && k->allowed_tools) {
                        _cleanup_free_ char *copy = strdup(k->allowed_tools);
                        char *p = copy, *w;

                        v = cJSON_CreateArray();
                        if (!copy || !v) {
                                cJSON_Delete(v);
                                return NULL;
                        }
                        while ((w = strsep(&p, " ")))
                                if (*w && !cJSON_AddItemToArray(v, cJSON_CreateString(w))) {
                                        cJSON_Delete(v);
                                        return NULL;
                                }
                } else
                        continue;
                if (!v || !cJSON_AddItemToObject(o, f->key, v)) {
                        cJSON_Delete(v);
                        return NULL;
                }
        }
        return TAKE_PTR(o);
}
