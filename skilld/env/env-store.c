/* The environment cache on disk: the digest and sealing of a built tree, the bindings from skill
 * hashes to environment ids, what a run opens, and list, show, rm and gc. */
#include <dirent.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

#include "env-internal.h"
#include "error.h"
#include "fileio.h"
#include "hash.h"

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

/* The names in a directory, sorted, without "." and "..". */
int env_dir_names(int fd, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        DIR *d;
        struct dirent *de;
        int dfd, r = 0;

        dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (dfd < 0)
                return -errno;
        d = fdopendir(dfd);
        if (!d) {
                safe_close(dfd);
                return -errno;
        }
        rewinddir(d);
        while ((errno = 0, de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                r = strv_extend(&l, de->d_name);
                if (r < 0)
                        break;
        }
        if (r >= 0 && errno != 0)
                r = -errno;
        closedir(d);
        if (r < 0)
                return r;
        if (l)
                qsort(l, strv_length(l), sizeof(char *), cmp_str);
        *ret = TAKE_PTR(l);
        return 0;
}

static int digest_dir(int fd, const char *prefix, const char *skip, Sha256 *h, uint64_t *size) {
        _cleanup_strv_free_ char **names = NULL;
        int r;

        r = env_dir_names(fd, &names);
        if (r < 0)
                return r;
        STRV_FOREACH(n, names) {
                _cleanup_free_ char *path = NULL;
                struct stat st;
                char line[128];

                if (skip && streq(*n, skip))
                        continue;
                path = isempty(prefix) ? strdup(*n) : strdup_printf("%s/%s", prefix, *n);
                if (!path)
                        return -ENOMEM;
                if (fstatat(fd, *n, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return -errno;
                /* Only the execute bit counts: write bits change when the tree is sealed. */
                (void) snprintf(line, sizeof(line), "%c%c ", S_ISDIR(st.st_mode) ? 'd' : S_ISLNK(st.st_mode) ? 'l' :
                                S_ISREG(st.st_mode) ? 'f' : '?', (st.st_mode & 0111) ? 'x' : '-');
                r = sha256_update(h, line, strlen(line));
                if (r >= 0)
                        r = sha256_update(h, path, strlen(path) + 1);
                if (r < 0)
                        return r;
                if (S_ISDIR(st.st_mode)) {
                        _cleanup_close_ int sub = openat(fd, *n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                        if (sub < 0)
                                return -errno;
                        r = digest_dir(sub, path, NULL, h, size);
                } else if (S_ISLNK(st.st_mode)) {
                        char target[PATH_MAX];
                        ssize_t k = readlinkat(fd, *n, target, sizeof(target));

                        if (k < 0)
                                return -errno;
                        r = sha256_update(h, target, (size_t) k);
                        if (r >= 0)
                                r = sha256_update(h, "", 1);
                } else if (S_ISREG(st.st_mode)) {
                        _cleanup_close_ int f = openat(fd, *n, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                        char hex[SHA256_HEX_SIZE];
                        uint64_t n_bytes;

                        if (f < 0)
                                return -errno;
                        r = sha256_fd(f, hex, &n_bytes);
                        if (r >= 0)
                                r = sha256_update(h, hex, sizeof(hex));
                        *size += n_bytes;
                } else
                        return -EBADFD; /* no device, fifo or socket belongs in an environment */
                if (r < 0)
                        return r;
        }
        return 0;
}

int env_tree_digest(int dir_fd, const char *skip, char ret[static 65], uint64_t *ret_size) {
        _cleanup_(sha256_freep) Sha256 *h = NULL;
        uint64_t size = 0;
        int r;

        r = sha256_new(&h);
        if (r < 0)
                return r;
        r = digest_dir(dir_fd, "", skip, h, &size);
        if (r < 0)
                return r;
        r = sha256_final_hex(h, ret);
        if (r < 0)
                return r;
        if (ret_size)
                *ret_size = size;
        return 0;
}

/* Walks the tree: directories get mode dir_mode after their contents (when seal, also the
 * write bits of files go and everything is fsync()ed). */
static int walk_modes(int fd, bool seal) {
        _cleanup_strv_free_ char **names = NULL;
        int r;

        if (!seal && fchmod(fd, 0755) < 0)
                return -errno;
        r = env_dir_names(fd, &names);
        if (r < 0)
                return r;
        STRV_FOREACH(n, names) {
                struct stat st;

                if (fstatat(fd, *n, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return -errno;
                if (S_ISDIR(st.st_mode)) {
                        _cleanup_close_ int sub = openat(fd, *n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                        if (sub < 0)
                                return -errno;
                        r = walk_modes(sub, seal);
                        if (r < 0)
                                return r;
                } else if (S_ISREG(st.st_mode) && seal) {
                        _cleanup_close_ int f = openat(fd, *n, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

                        if (f < 0)
                                return -errno;
                        if (fchmod(f, (st.st_mode & 0555) | 0444) < 0 || fsync(f) < 0)
                                return -errno;
                }
        }
        if (seal && (fchmod(fd, 0555) < 0 || fsync(fd) < 0))
                return -errno;
        return 0;
}

int env_tree_seal(int dir_fd) {
        return walk_modes(dir_fd, true);
}

int env_tree_make_writable(int dir_fd, const char *path) {
        _cleanup_close_ int fd = openat(dir_fd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        return walk_modes(fd, false);
}

int env_tree_remove(int dir_fd, const char *path) {
        int r;

        r = env_tree_make_writable(dir_fd, path);
        if (r < 0 && r != -ENOTDIR)
                return r;
        return rm_rf_at(dir_fd, path);
}

static bool id_is_valid(const char *id) {
        if (strlen(id) != 64)
                return false;
        for (const char *p = id; *p; p++)
                if (!strchr("0123456789abcdef", *p))
                        return false;
        return true;
}

static int link_get(const char *cache_dir, const char *dir, const char *key, char ret_id[static 65]) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        int r;

        path = strdup_printf("%s/%s/%s", cache_dir, dir, key);
        if (!path)
                return -ENOMEM;
        r = read_full_file_at(AT_FDCWD, path, 128, true, &text, NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        text[strcspn(text, "\n")] = '\0';
        if (!streq(text, "-") && !id_is_valid(text))
                return 0;
        (void) snprintf(ret_id, 65, "%s", text);
        return 1;
}

int env_binding_get(const char *cache_dir, const char *skill_hash, char ret_id[static 65]) {
        return link_get(cache_dir, "bindings", skill_hash, ret_id);
}

static int link_set(const char *cache_dir, const char *dir, const char *key, const char *id) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        int r;

        if (!id_is_valid(key))
                return -EINVAL;
        r = mkdir_p_at(AT_FDCWD, cache_dir, 0755);
        if (r < 0)
                return r;
        fd = open(cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = mkdir_p_at(fd, dir, 0755);
        if (r < 0)
                return r;
        text = strdup_printf("%s/%s", dir, key);
        if (!text)
                return -ENOMEM;
        return write_file_atomic_at(fd, text, id, strlen(id), 0644);
}

int env_binding_set(const char *cache_dir, const char *skill_hash, const char *id) {
        return link_set(cache_dir, "bindings", skill_hash, id);
}

int env_needs_set(const char *cache_dir, const EnvSpec *spec) {
        return link_set(cache_dir, "needs", spec->needs_id, spec->id);
}

static bool env_exists(const char *cache_dir, const char *id) {
        _cleanup_free_ char *path = strdup_printf("%s/%s", cache_dir, id);
        struct stat st;

        return path && lstat(path, &st) >= 0 && S_ISDIR(st.st_mode);
}

int env_find(const char *cache_dir, const EnvSpec *spec, char ret_id[static 65]) {
        char id[65];

        if (env_exists(cache_dir, spec->id)) {
                memcpy(ret_id, spec->id, 65);
                return 1;
        }
        if (link_get(cache_dir, "needs", spec->needs_id, id) > 0 && id_is_valid(id) && env_exists(cache_dir, id)) {
                memcpy(ret_id, id, 65);
                return 1;
        }
        return 0;
}

static void describe_needs(const EnvSpec *spec, FILE *f) {
        const char *sep = "";

        if (spec->python) {
                (void) fputs("Python packages", f);
                STRV_FOREACH(n, spec->python_names)
                        fprintf(f, "%s %s", n == spec->python_names ? "" : ",", *n);
                sep = "; ";
        }
        if (spec->system) {
                fprintf(f, "%sDebian packages", sep);
                STRV_FOREACH(n, spec->system)
                        fprintf(f, "%s %s", n == spec->system ? "" : ",", *n);
                sep = "; ";
        }
        if (spec->node) {
                fprintf(f, "%snpm packages", sep);
                STRV_FOREACH(n, spec->node)
                        fprintf(f, "%s %s", n == spec->node ? "" : ",", *n);
        } else if (spec->package_json)
                fprintf(f, "%sthe npm packages of package.json", sep);
}

int env_describe_needs(const EnvSpec *spec, char **ret) {
        size_t size = 0;
        FILE *f = open_memstream(ret, &size);

        if (!f)
                return -ENOMEM;
        describe_needs(spec, f);
        return fclose(f) == 0 ? 0 : -ENOMEM;
}

int env_open_id(const char *cache_dir, const char *id) {
        _cleanup_free_ char *path = strdup_printf("%s/%s", cache_dir, id);
        int fd;

        if (!path)
                return -ENOMEM;
        fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        /* Collection goes by last use: the environment's own mtime says when a run last took it. */
        (void) utimensat(fd, "", (const struct timespec[2]) { { .tv_nsec = UTIME_OMIT }, { .tv_nsec = UTIME_NOW } },
                         AT_EMPTY_PATH);
        return fd;
}

int env_open_for_run(const char *cache_dir, const char *skill_hash, const EnvSpec *spec, int *ret_fd,
                     char **error) {
        _cleanup_free_ char *needs = NULL;
        int fd, r;

        char id[65];

        if (env_spec_is_empty(spec))
                return 0;
        if (env_find(cache_dir, spec, id) <= 0)
                memcpy(id, spec->id, sizeof(id));
        fd = env_open_id(cache_dir, id);
        if (fd < 0) {
                if (fd != -ENOENT)
                        return error_setf(error, fd, "Cannot open the environment %s in %s: %s", id, cache_dir,
                                          strerror(-fd));
                /* Only optional imports: the script copes without them. */
                if (!spec->required)
                        return 0;
                r = env_describe_needs(spec, &needs);
                if (r < 0)
                        return r;
                return error_setf(error, -ENOENT, "this skill needs %s, and its environment %.12s is not built",
                                  needs, spec->id);
        }
        if (skill_hash)
                (void) env_binding_set(cache_dir, skill_hash, id);
        *ret_fd = fd;
        return 1;
}

void env_info_done(EnvInfo *i) {
        cJSON_Delete(i->manifest);
        i->manifest = NULL;
}

void env_info_array_free(EnvInfo *a, size_t n) {
        for (size_t i = 0; i < n; i++)
                env_info_done(&a[i]);
        free(a);
}

static int env_info_read(int cache_fd, const char *id, EnvInfo *ret) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        struct stat st;
        EnvInfo i = {};
        int r;

        if (fstatat(cache_fd, id, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        (void) snprintf(i.id, sizeof(i.id), "%s", id);
        i.last_used_usec = (uint64_t) st.st_mtim.tv_sec * 1000000U + (uint64_t) st.st_mtim.tv_nsec / 1000U;
        path = strdup_printf("%s/manifest.json", id);
        if (!path)
                return -ENOMEM;
        r = read_full_file_at(cache_fd, path, 64U * 1024U * 1024U, true, &text, NULL);
        if (r >= 0) {
                cJSON *size, *created;

                i.manifest = cJSON_Parse(text);
                size = cJSON_GetObjectItemCaseSensitive(i.manifest, "size");
                created = cJSON_GetObjectItemCaseSensitive(i.manifest, "created_usec");
                if (cJSON_IsNumber(size))
                        i.size = (uint64_t) size->valuedouble;
                if (cJSON_IsNumber(created))
                        i.created_usec = (uint64_t) created->valuedouble;
        }
        *ret = i;
        return 0;
}

static int open_cache(const char *cache_dir) {
        int fd = open(cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        return fd < 0 ? -errno : fd;
}

int env_list(const char *cache_dir, EnvInfo **ret, size_t *ret_n) {
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_close_ int fd = -EBADF;
        EnvInfo *a = NULL;
        size_t n = 0;
        int r;

        fd = open_cache(cache_dir);
        if (fd == -ENOENT) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        if (fd < 0)
                return fd;
        r = env_dir_names(fd, &names);
        if (r < 0)
                return r;
        STRV_FOREACH(name, names) {
                EnvInfo *na;

                if (!id_is_valid(*name))
                        continue;
                na = reallocarray(a, n + 1, sizeof(*a));
                if (!na) {
                        env_info_array_free(a, n);
                        return -ENOMEM;
                }
                a = na;
                if (env_info_read(fd, *name, &a[n]) >= 0)
                        n++;
        }
        *ret = a;
        *ret_n = n;
        return 0;
}

int env_resolve_id(const char *cache_dir, const char *prefix, char ret_id[static 65], char **error) {
        EnvInfo *a = NULL;
        size_t n = 0, hits = 0;
        int r;

        if (strlen(prefix) < 8 || strlen(prefix) > 64 || strspn(prefix, "0123456789abcdef") != strlen(prefix))
                return error_setf(error, -EINVAL, "%s: not an environment id (8 to 64 hex digits)", prefix);
        r = env_list(cache_dir, &a, &n);
        if (r < 0)
                return error_setf(error, r, "Cannot list %s: %s", cache_dir, strerror(-r));
        for (size_t i = 0; i < n; i++)
                if (startswith(a[i].id, prefix)) {
                        hits++;
                        memcpy(ret_id, a[i].id, 65);
                }
        env_info_array_free(a, n);
        if (hits == 0)
                return error_setf(error, -ENOENT, "%s: no such environment in %s", prefix, cache_dir);
        if (hits > 1)
                return error_setf(error, -EEXIST, "%s: more than one environment has this prefix", prefix);
        return 0;
}

/* Holds the build lock of id, so nothing removes an environment a build is finishing. */
static int lock_id(int cache_fd, const char *id, int flags) {
        _cleanup_free_ char *name = strdup_printf(".lock-%s", id);
        int fd;

        if (!name)
                return -ENOMEM;
        fd = openat(cache_fd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        if (flock(fd, LOCK_EX | flags) < 0) {
                int r = -errno;
                safe_close(fd);
                return r;
        }
        return fd;
}

int env_remove(const char *cache_dir, const char *id) {
        _cleanup_close_ int fd = -EBADF, lock = -EBADF;
        _cleanup_free_ char *lock_name = NULL;

        if (!id_is_valid(id))
                return -EINVAL;
        fd = open_cache(cache_dir);
        if (fd < 0)
                return fd;
        lock = lock_id(fd, id, 0);
        if (lock < 0)
                return lock;
        lock_name = strdup_printf(".lock-%s", id);
        if (lock_name)
                (void) unlinkat(fd, lock_name, 0);
        return env_tree_remove(fd, id);
}

static int cmp_last_used(const void *a, const void *b) {
        const EnvInfo *x = a, *y = b;

        return x->last_used_usec < y->last_used_usec ? -1 : x->last_used_usec > y->last_used_usec;
}

int env_gc(const char *cache_dir, uint64_t max_count, uint64_t max_bytes, char ***ret_removed) {
        _cleanup_strv_free_ char **removed = NULL, **names = NULL;
        _cleanup_close_ int fd = -EBADF;
        EnvInfo *a = NULL;
        size_t n = 0, count;
        uint64_t total = 0;
        int r, k = 0;

        fd = open_cache(cache_dir);
        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;

        /* Leftovers of builds that were killed: a build in progress holds its lock. */
        r = env_dir_names(fd, &names);
        if (r < 0)
                return r;
        STRV_FOREACH(name, names) {
                const char *p = startswith(*name, ".build-");
                char id[65];
                int lock;

                if (!p || strlen(p) < 64)
                        continue;
                (void) snprintf(id, sizeof(id), "%.64s", p);
                lock = lock_id(fd, id, LOCK_NB);
                if (lock < 0)
                        continue;
                if (env_tree_remove(fd, *name) >= 0)
                        k++;
                safe_close(lock);
        }

        r = env_list(cache_dir, &a, &n);
        if (r < 0)
                return r;
        if (n > 1)
                qsort(a, n, sizeof(*a), cmp_last_used);
        for (size_t i = 0; i < n; i++)
                total += a[i].size;
        count = n;
        for (size_t i = 0; i < n && (count > max_count || total > max_bytes); i++) {
                r = env_remove(cache_dir, a[i].id);
                if (r < 0)
                        continue;
                count--;
                total -= a[i].size;
                k++;
                if (strv_extend(&removed, a[i].id) < 0)
                        break;
        }
        env_info_array_free(a, n);
        if (ret_removed)
                *ret_removed = TAKE_PTR(removed);
        return k;
}
