/* See skills.h. */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "error.h"
#include "fileio.h"
#include "inspect.h"
#include "lint.h"
#include "skills.h"

#define STAGING_PREFIX ".#install-"
#define TRASH_PREFIX ".#trash-"

static const char *const origin_names[_SKILL_ORIGIN_MAX] = {
        [SKILL_ORIGIN_ADMIN] = "admin",
        [SKILL_ORIGIN_INSTALLED] = "installed",
        [SKILL_ORIGIN_VENDOR] = "vendor",
};

const char *skill_origin_to_string(SkillOrigin o) {
        if (o < 0 || o >= _SKILL_ORIGIN_MAX)
                return NULL;
        return origin_names[o];
}

int skill_dirs_init(SkillDirs *d, const char *admin_dir, const char *installed_dir, const char *vendor_dir) {
        const char *paths[_SKILL_ORIGIN_MAX] = {
                [SKILL_ORIGIN_ADMIN] = admin_dir ?: SKILLS_ADMIN_DIR,
                [SKILL_ORIGIN_INSTALLED] = installed_dir,
                [SKILL_ORIGIN_VENDOR] = vendor_dir ?: SKILLS_VENDOR_DIR,
        };
        struct stat st;

        if (!installed_dir)
                return -EINVAL;
        for (SkillOrigin o = 0; o < _SKILL_ORIGIN_MAX; o++) {
                d->path[o] = strdup(paths[o]);
                if (!d->path[o]) {
                        skill_dirs_done(d);
                        return -ENOMEM;
                }
        }
        if (mkdir(installed_dir, 0755) < 0 && errno != EEXIST)
                return -errno;
        /* The sandbox user reaches a skill through a bind mount, but the directory is read by
         * anyone listing skills on the host as well: world-readable, root-owned. */
        if (lstat(installed_dir, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        if ((st.st_mode & 07777) != 0755 && chmod(installed_dir, 0755) < 0)
                return -errno;
        return 0;
}

void skill_dirs_done(SkillDirs *d) {
        for (SkillOrigin o = 0; o < _SKILL_ORIGIN_MAX; o++) {
                free(d->path[o]);
                d->path[o] = NULL;
        }
}

static int open_in(const char *dir, const char *name, int *ret_fd) {
        _cleanup_close_ int dfd = -EBADF;
        int fd;

        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        /* The folder itself is not followed if it is a symlink: an installed skill is a tree of
         * its directory, not a pointer to somewhere else. */
        fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return 0;
}

int skills_open(const SkillDirs *d, const char *name, int *ret_fd, SkillOrigin *ret_origin) {
        if (!skill_name_is_valid(name))
                return -EINVAL;
        for (SkillOrigin o = 0; o < _SKILL_ORIGIN_MAX; o++) {
                int fd = -EBADF, r;

                r = open_in(d->path[o], name, &fd);
                if (r == -ENOENT || r == -ENOTDIR || r == -ELOOP)
                        continue;
                if (r < 0)
                        return r;
                *ret_fd = fd;
                if (ret_origin)
                        *ret_origin = o;
                return 0;
        }
        return -ENOPKG;
}

void skill_infos_free(SkillInfo *l, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(l[i].name);
                free(l[i].description);
                free(l[i].hash);
        }
        free(l);
}

static int cmp_info(const void *a, const void *b) {
        return strcmp(((const SkillInfo *) a)->name, ((const SkillInfo *) b)->name);
}

static bool listed(const SkillInfo *l, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (streq(l[i].name, name))
                        return true;
        return false;
}

static int list_one(DIR *d, const char *name, SkillOrigin origin, SkillInfo *ret) {
        _cleanup_(inspection_done) Inspection i = {};
        _cleanup_close_ int fd = -EBADF;
        int r;

        fd = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = inspect_directory(fd, name, NULL, 0, &i);
        if (r < 0)
                return r;
        *ret = (SkillInfo) { .origin = origin };
        ret->name = strdup(name);
        if (i.error_errno == 0 && !streq(i.name, name))
                ret->description = strdup_printf("invalid: the folder %s holds the skill %s", name, i.name);
        else if (i.error_errno != 0)
                ret->description = strdup_printf("invalid: %s", strna(i.error));
        else
                ret->description = strdup(strempty(i.description));
        ret->hash = strdup(i.error_errno == 0 && streq(i.name, name) ? i.hash : "");
        if (!ret->name || !ret->description || !ret->hash) {
                free(ret->name);
                free(ret->description);
                free(ret->hash);
                return -ENOMEM;
        }
        return 0;
}

int skills_list(const SkillDirs *dirs, SkillInfo **ret, size_t *ret_n) {
        SkillInfo *l = NULL;
        size_t n = 0;
        int r = 0;

        for (SkillOrigin o = 0; o < _SKILL_ORIGIN_MAX; o++) {
                struct dirent *de;
                DIR *d;

                d = opendir(dirs->path[o]);
                if (!d)
                        continue;
                while ((de = readdir(d))) {
                        SkillInfo *nl;

                        /* Staging and trash folders start with a dot, as does anything hidden. */
                        if (de->d_name[0] == '.' || !skill_name_is_valid(de->d_name) ||
                            listed(l, n, de->d_name))
                                continue;
                        if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
                                continue;
                        nl = reallocarray(l, n + 1, sizeof(SkillInfo));
                        if (!nl) {
                                r = -ENOMEM;
                                break;
                        }
                        l = nl;
                        r = list_one(d, de->d_name, o, &l[n]);
                        if (r == -ENOMEM)
                                break;
                        if (r >= 0)
                                n++;
                        r = 0;
                }
                closedir(d);
                if (r < 0) {
                        skill_infos_free(l, n);
                        return r;
                }
        }
        if (n > 0)
                qsort(l, n, sizeof(SkillInfo), cmp_info);
        *ret = l;
        *ret_n = n;
        return 0;
}

static char *random_name(const char *prefix) {
        uint64_t v;

        if (getrandom(&v, sizeof(v), 0) != sizeof(v))
                return NULL;
        return strdup_printf("%s%016" PRIx64, prefix, v);
}

int skills_new_staging(const SkillDirs *d, char **ret_name, int *ret_fd) {
        _cleanup_close_ int dfd = -EBADF, fd = -EBADF;
        _cleanup_free_ char *name = NULL;

        dfd = open(d->path[SKILL_ORIGIN_INSTALLED], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        name = random_name(STAGING_PREFIX);
        if (!name)
                return -ENOMEM;
        if (mkdirat(dfd, name, 0755) < 0)
                return -errno;
        fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fchmod(fd, 0755) < 0) {
                int saved = errno;

                (void) rm_rf_at(dfd, name);
                return -saved;
        }
        *ret_name = TAKE_PTR(name);
        *ret_fd = TAKE_FD(fd);
        return 0;
}

void skills_drop_staging(const SkillDirs *d, const char *staging) {
        _cleanup_close_ int dfd = open(d->path[SKILL_ORIGIN_INSTALLED], O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (dfd >= 0 && startswith(staging, STAGING_PREFIX))
                (void) rm_rf_at(dfd, staging);
}

static bool origin_has(const SkillDirs *d, SkillOrigin o, const char *name) {
        _cleanup_close_ int fd = -EBADF;

        return open_in(d->path[o], name, &fd) >= 0;
}

int skills_install(const SkillDirs *d, const char *staging, const char *name, bool replace, char **error) {
        _cleanup_close_ int dfd = -EBADF;
        _cleanup_free_ char *trash = NULL;

        if (!skill_name_is_valid(name) || !startswith(staging, STAGING_PREFIX))
                return error_setf(error, -EINVAL, "Invalid skill name '%s'.", name);
        if (origin_has(d, SKILL_ORIGIN_ADMIN, name))
                return error_setf(error, -EEXIST,
                                  "The skill %s is installed by the administrator in %s, which an "
                                  "install cannot replace.",
                                  name, d->path[SKILL_ORIGIN_ADMIN]);

        dfd = open(d->path[SKILL_ORIGIN_INSTALLED], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return error_setf(error, -errno, "Cannot open %s: %m", d->path[SKILL_ORIGIN_INSTALLED]);

        if (renameat2(dfd, staging, dfd, name, RENAME_NOREPLACE) >= 0)
                return 0;
        if (errno != EEXIST)
                return error_setf(error, -errno, "Cannot install the skill %s: %m", name);
        if (!replace)
                return error_setf(error, -EEXIST, "The skill %s is installed already.", name);

        /* One step for anyone looking: the new tree takes the name, the old one the staging
         * name, which then goes to the trash. */
        if (renameat2(dfd, staging, dfd, name, RENAME_EXCHANGE) < 0)
                return error_setf(error, -errno, "Cannot replace the skill %s: %m", name);
        trash = random_name(TRASH_PREFIX);
        if (!trash || renameat(dfd, staging, dfd, trash) < 0)
                (void) rm_rf_at(dfd, staging);
        return 0;
}

int skills_remove(const SkillDirs *d, const char *name, char **error) {
        _cleanup_close_ int dfd = -EBADF;
        _cleanup_free_ char *trash = NULL;

        if (!skill_name_is_valid(name))
                return error_setf(error, -EINVAL, "Invalid skill name.");
        if (!origin_has(d, SKILL_ORIGIN_INSTALLED, name)) {
                for (SkillOrigin o = 0; o < _SKILL_ORIGIN_MAX; o++)
                        if (o != SKILL_ORIGIN_INSTALLED && origin_has(d, o, name))
                                return error_setf(error, -EROFS,
                                                  "The skill %s is part of the host in %s, not "
                                                  "installed through skilld; remove it there.",
                                                  name, d->path[o]);
                return error_setf(error, -ENOPKG, "No skill %s is installed.", name);
        }

        dfd = open(d->path[SKILL_ORIGIN_INSTALLED], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return error_setf(error, -errno, "Cannot open %s: %m", d->path[SKILL_ORIGIN_INSTALLED]);
        trash = random_name(TRASH_PREFIX);
        if (!trash)
                return -ENOMEM;
        if (renameat(dfd, name, dfd, trash) < 0)
                return error_setf(error, -errno, "Cannot remove the skill %s: %m", name);
        return 0;
}

void skills_purge(const SkillDirs *d, bool staging) {
        struct dirent *de;
        DIR *dir;

        dir = opendir(d->path[SKILL_ORIGIN_INSTALLED]);
        if (!dir)
                return;
        while ((de = readdir(dir)))
                if (startswith(de->d_name, TRASH_PREFIX) ||
                    (staging && startswith(de->d_name, STAGING_PREFIX)))
                        (void) rm_rf_at(dirfd(dir), de->d_name);
        closedir(dir);
}
