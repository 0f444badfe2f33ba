/* See skill-fd.h. */
#include <sys/mman.h>
#include <sys/stat.h>

#include "error.h"
#include "fileio.h"
#include "skill-fd.h"

void local_skill_done(LocalSkill *s) {
        s->skill = skill_free(s->skill);
        s->source = skill_source_free(s->source);
        s->archive_fd = safe_close(s->archive_fd);
}

/* Whether DIR/NAME exists as a regular file, not following a symlink at NAME: one lstat() of the
 * joined path, not an open of DIR, a stat and a close. */
static int access_nofollow_at(const char *dir, const char *name) {
        _cleanup_free_ char *path = strjoin_path(dir, name);
        struct stat st;

        if (!path)
                return -ENOMEM;
        if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        return S_ISREG(st.st_mode) ? 0 : -EBADFD;
}

int local_skill_open(const char *path, LocalSkill *ret, char **error) {
        LoaderLimits limits = LOADER_LIMITS_DEFAULT;
        _cleanup_(skill_source_freep) SkillSource *source = NULL;
        _cleanup_(skill_freep) Skill *skill = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        if (stat(path, &st) < 0)
                return error_setf(error, -errno, "%s: %m", path);

        if (S_ISREG(st.st_mode)) {
                _cleanup_free_ char *why = NULL;

                /* The archive the loader checks is the very file the service gets; the very
                 * file stat() saw, or a clear error if it was swapped for a FIFO. */
                fd = open_regular_at(AT_FDCWD, path, O_RDONLY);
                if (fd < 0)
                        return error_setf(error, fd, "%s: cannot open: %s", path, open_regular_strerror(fd));
                r = skill_source_open_fd(fd, path, &limits, &source, &why);
                if (r == -EPROTONOSUPPORT)
                        return error_setf(error, r, "%s: %s; expected a skill folder (holding SKILL.md) or a "
                                          ".skill file (a zip archive)", path, strna(why));
                if (r < 0)
                        return error_setf(error, r, "%s: %s", path, strna(why));
        } else if (S_ISDIR(st.st_mode)) {
                /* Said before the tree is walked, which would stop at the first odd file inside. */
                if (access_nofollow_at(path, "SKILL.md") < 0 && access_nofollow_at(path, "skill.md") < 0)
                        return error_setf(error, -ENOENT, "%s: a folder without SKILL.md; a skill is a folder "
                                          "with SKILL.md at its top, or a .skill file", path);
                r = skill_source_open(path, &limits, &source, error);
                if (r < 0)
                        return r;
        } else
                return error_setf(error, -EBADFD, "%s: not a regular file or a folder (a FIFO, socket or "
                                  "device); expected a skill folder or a .skill file", path);

        r = skill_load_at(source->dir_fd, &skill, error);
        if (r < 0)
                return r;

        ret->source = TAKE_PTR(source);
        ret->skill = TAKE_PTR(skill);
        ret->archive_fd = TAKE_FD(fd);
        return 0;
}

int local_skill_to_fd(const LocalSkill *s, int *ret_fd, char **error) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (s->archive_fd >= 0) {
                /* The loader reads with pread(): the offset is still 0 for the service. */
                fd = fcntl(s->archive_fd, F_DUPFD_CLOEXEC, 3);
                if (fd < 0)
                        return error_setf(error, -errno, "cannot duplicate the skill's fd: %m");
                *ret_fd = TAKE_FD(fd);
                return 0;
        }

        fd = memfd_create("skill", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return error_setf(error, -errno, "cannot create a memfd for the skill: %m");
        /* A nameless skill still gets a top folder; the service says what is wrong with it. */
        r = skill_package(s->source->dir_fd, s->skill->name ?: s->source->dir_name ?: "skill", fd, error);
        if (r < 0)
                return r;
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
                return error_setf(error, -errno, "cannot seal the packed skill: %m");
        if (lseek(fd, 0, SEEK_SET) < 0)
                return error_setf(error, -errno, "cannot rewind the packed skill: %m");
        *ret_fd = TAKE_FD(fd);
        return 0;
}
