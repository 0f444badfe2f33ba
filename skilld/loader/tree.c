/* A skill as the rest of skilld sees it: a directory fd on a tree that passed the loader's rules,
 * wherever it came from. A directory is checked in place; an archive is extracted into a fresh
 * private directory (0700, so nobody else can reach the tree while it is being written) that
 * lives exactly as long as the SkillSource. */
#include <sys/stat.h>

#include "error.h"
#include "fileio.h"
#include "loader-internal.h"

/* Name of the tree inside the private temporary directory. */
#define TEMP_TREE_NAME "skill"

static void rm_rf_and_freep(char **p) {
        if (*p) {
                (void) rm_rf_at(AT_FDCWD, *p);
                free(*p);
        }
}

int loader_check_tree(int dir_fd, const LoaderLimits *limits, char **error) {
        _cleanup_tree_list_ TreeList list = {};

        return tree_walk(dir_fd, limits, TREE_WALK_REFUSE_HARDLINKS, &list, error);
}

SkillSource *skill_source_free(SkillSource *s) {
        if (!s)
                return NULL;
        safe_close(s->dir_fd);
        if (s->tree) {
                tree_list_done(s->tree);
                free(s->tree);
        }
        if (s->temp_dir)
                (void) rm_rf_at(AT_FDCWD, s->temp_dir);
        free(s->temp_dir);
        free(s->path);
        free(s->dir_name);
        free(s);
        return NULL;
}

static SkillSource *skill_source_new(void) {
        SkillSource *s = calloc(1, sizeof(SkillSource));

        if (s)
                s->dir_fd = -EBADF;
        return s;
}

/* The last component of a path ("a/b/" gives "b"), without a .skill or .zip suffix if asked;
 * NULL if there is none. */
static char *last_component(const char *path, bool strip_suffix) {
        const char *end, *start;
        size_t n;

        if (isempty(path))
                return NULL;
        end = path + strlen(path);
        while (end > path && end[-1] == '/')
                end--;
        start = end;
        while (start > path && start[-1] != '/')
                start--;
        n = end - start;
        if (strip_suffix) {
                if (n > 6 && memcmp(end - 6, ".skill", 6) == 0)
                        n -= 6;
                else if (n > 4 && memcmp(end - 4, ".zip", 4) == 0)
                        n -= 4;
        }
        if (n == 0 || (n == 1 && start[0] == '.') || (n == 2 && start[0] == '.' && start[1] == '.'))
                return NULL;
        return strndup(start, n);
}

/* Where fd's directory is, for messages and mounts; dir_fd stays the authority. */
static char *fd_path(int fd) {
        char proc[sizeof("/proc/self/fd/") + 12], buf[PATH_MAX];
        ssize_t k;

        snprintf(proc, sizeof(proc), "/proc/self/fd/%i", fd);
        k = readlink(proc, buf, sizeof(buf) - 1);
        if (k <= 0 || buf[0] != '/')
                return NULL;
        buf[k] = '\0';
        return strdup(buf);
}

/* Takes dir_fd. */
static int source_from_directory(int dir_fd, const char *path, const char *name_hint,
                                 const LoaderLimits *limits,
                                 SkillSource **ret, char **error) {
        _cleanup_(skill_source_freep) SkillSource *s = NULL;
        _cleanup_close_ int fd = dir_fd;
        _cleanup_tree_list_ TreeList list = {};
        int r;

        /* loader_check_tree()'s walk, sorted and kept: skill_source_hash() takes it over. */
        r = tree_walk(fd, limits, TREE_WALK_REFUSE_HARDLINKS | TREE_WALK_SORT, &list, error);
        if (r < 0)
                return r;

        s = skill_source_new();
        if (!s)
                return -ENOMEM;
        s->tree = malloc(sizeof(TreeList));
        if (!s->tree)
                return -ENOMEM;
        *s->tree = list;
        list = (TreeList) {};
        s->path = path ? strdup(path) : fd_path(fd);
        if (path && !s->path)
                return -ENOMEM;
        s->dir_name = last_component(name_hint ?: s->path, false);
        s->dir_fd = TAKE_FD(fd);
        *ret = TAKE_PTR(s);
        return 0;
}

static int source_from_archive(int archive_fd, const char *name_hint, const LoaderLimits *limits,
                               SkillSource **ret, char **error) {
        _cleanup_(skill_source_freep) SkillSource *s = NULL;
        _cleanup_(rm_rf_and_freep) char *temp = NULL;
        _cleanup_close_ int temp_fd = -EBADF, fd = -EBADF;
        _cleanup_free_ char *top = NULL, *path = NULL;
        int r;

        r = mkdtemp_malloc("skilld-skill-XXXXXX", &temp);
        if (r < 0)
                return error_setf(error, r, "cannot create a temporary directory: %s", strerror(-r));
        temp_fd = open(temp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (temp_fd < 0)
                return error_setf(error, -errno, "%s: cannot open: %m", temp);
        if (mkdirat(temp_fd, TEMP_TREE_NAME, 0755) < 0)
                return error_setf(error, -errno, "%s: cannot create %s: %m", temp, TEMP_TREE_NAME);
        fd = openat(temp_fd, TEMP_TREE_NAME, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return error_setf(error, -errno, "%s: cannot open %s: %m", temp, TEMP_TREE_NAME);
        if (fchmod(fd, 0755) < 0)
                return error_setf(error, -errno, "%s: cannot set mode: %m", temp);

        r = loader_extract_zip(archive_fd, fd, limits, &top, error);
        if (r < 0)
                return r;

        path = strjoin_path(temp, TEMP_TREE_NAME);
        s = skill_source_new();
        if (!path || !s)
                return -ENOMEM;
        s->dir_name = top ? TAKE_PTR(top) : last_component(name_hint, true);
        s->path = TAKE_PTR(path);
        s->temp_dir = TAKE_PTR(temp);
        s->temporary = s->from_archive = true;
        s->dir_fd = TAKE_FD(fd);
        *ret = TAKE_PTR(s);
        return 0;
}

int skill_source_open(const char *path, const LoaderLimits *limits, SkillSource **ret, char **error) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *resolved = NULL;
        struct stat st, st2;

        /* Look before opening: opening a device or FIFO can have effects of its own. */
        if (stat(path, &st) < 0)
                return error_setf(error, -errno, "%s: %m", path);
        if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
                return error_setf(error, -EPERM, "%s: not a directory or a .skill file", path);

        fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return error_setf(error, -errno, "%s: cannot open: %m", path);
        if (fstat(fd, &st2) < 0)
                return error_setf(error, -errno, "%s: cannot stat: %m", path);
        if (st.st_dev != st2.st_dev || st.st_ino != st2.st_ino)
                return error_setf(error, -EBUSY, "%s: changed while being opened", path);

        if (S_ISREG(st2.st_mode))
                return source_from_archive(fd, path, limits, ret, error);

        /* Where the directory opened is: one readlink() of its fd, not one per component of
         * path (realpath()); the same answer, and no race between the two. */
        resolved = fd_path(fd) ?: realpath(path, NULL);
        return source_from_directory(TAKE_FD(fd), resolved, NULL, limits, ret, error);
}

int skill_source_open_fd(int fd, const char *name_hint, const LoaderLimits *limits, SkillSource **ret,
                         char **error) {
        struct stat st;
        int dfd;

        if (fstat(fd, &st) < 0)
                return error_setf(error, -errno, "%s: cannot stat: %m", strna(name_hint));
        if (S_ISREG(st.st_mode))
                return source_from_archive(fd, name_hint, limits, ret, error);
        if (!S_ISDIR(st.st_mode))
                return error_setf(error, -EPERM, "%s: not a directory or a .skill file", strna(name_hint));

        /* A fresh open file description: the walk must not move the caller's directory offset. */
        dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return error_setf(error, -errno, "%s: cannot open: %m", strna(name_hint));
        return source_from_directory(dfd, NULL, name_hint, limits, ret, error);
}
