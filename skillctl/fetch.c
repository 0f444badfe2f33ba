/* See fetch.h. */
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "fetch.h"
#include "fileio.h"
#include "hash.h"
#include "loader.h"
#include "log.h"
#include "term-escape.h"

int open_dir_beneath(int dir_fd, const char *rel, bool create, int *ret_fd) {
        _cleanup_free_ char *copy = strdup(rel);
        _cleanup_close_ int fd = -EBADF;
        char *p, *save = NULL;

        if (!copy)
                return -ENOMEM;
        fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return -errno;

        for (p = strtok_r(copy, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
                int nfd;

                if (streq(p, ".") || streq(p, ".."))
                        return -EINVAL;
                nfd = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (nfd < 0 && errno == ENOENT && create) {
                        if (mkdirat(fd, p, 0755) < 0 && errno != EEXIST)
                                return -errno;
                        nfd = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                }
                if (nfd < 0) {
                        struct stat st;

                        /* O_DIRECTORY | O_NOFOLLOW on a symlink fails with ENOTDIR: say which. */
                        if (errno == ENOTDIR && fstatat(fd, p, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                            S_ISLNK(st.st_mode))
                                return -ELOOP;
                        return -errno;
                }
                safe_close(fd);
                fd = nfd;
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* A fresh, unguessable name for the temporary file next to the target. */
static int open_temp_at(int dir_fd, char ret_name[static 32]) {
        for (unsigned attempt = 0; attempt < 16; attempt++) {
                uint64_t v;
                int fd;

                if (getrandom(&v, sizeof(v), 0) != sizeof(v))
                        return -EIO;
                (void) snprintf(ret_name, 32, ".#skillctl-%016" PRIx64, v);
                fd = openat(dir_fd, ret_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
                if (fd >= 0)
                        return fd;
                if (errno != EEXIST)
                        return -errno;
        }
        return -EEXIST;
}

int copy_fd_to_file_atomic(int src_fd, int dir_fd, const char *rel, const char *expected_sha256,
                           uint64_t *ret_size, int *ret_unsynced_fd) {
        _cleanup_(sha256_freep) Sha256 *h = NULL;
        _cleanup_close_ int parent_fd = -EBADF, fd = -EBADF;
        _cleanup_free_ char *parent = NULL;
        const char *base = strrchr(rel, '/');
        char temp[32], hex[SHA256_HEX_SIZE];
        uint64_t size = 0;
        int r;

        if (base) {
                parent = strndup(rel, base - rel);
                if (!parent)
                        return -ENOMEM;
                base++;
                r = open_dir_beneath(dir_fd, parent, true, &parent_fd);
        } else {
                base = rel;
                r = open_dir_beneath(dir_fd, "", false, &parent_fd);
        }
        if (r < 0)
                return r;
        if (isempty(base) || streq(base, ".") || streq(base, ".."))
                return -EINVAL;

        /* Hashed only against a digest to check (an artifact the service listed with one): a log
         * has none, and its copy need not load a hash library (nettle's load and CPU detection
         * are a sixth of skillctl run's instructions through the service). A download's size is
         * not known ahead: hashed as a large input. */
        if (!isempty(expected_sha256)) {
                r = sha256_new_sized(UINT64_MAX, &h);
                if (r < 0)
                        return r;
        }
        fd = open_temp_at(parent_fd, temp);
        if (fd < 0)
                return fd;

        for (;;) {
                char buf[128 * 1024];
                ssize_t k;

                k = read(src_fd, buf, sizeof(buf));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        r = -errno;
                        goto fail;
                }
                if (k == 0)
                        break;
                r = h ? sha256_update(h, buf, k) : 0;
                if (r >= 0)
                        r = loop_write(fd, buf, k);
                if (r < 0)
                        goto fail;
                size += k;
        }

        if (h) {
                r = sha256_final_hex(h, hex);
                if (r < 0)
                        goto fail;
                if (!streq(hex, expected_sha256)) {
                        r = -EBADMSG;
                        goto fail;
                }
        }
        /* Unsynced, the caller's fsync() must come before anything that vouches for the copy. */
        if (!ret_unsynced_fd && fsync(fd) < 0) {
                r = -errno;
                goto fail;
        }
        /* renameat() replaces whatever is there, a symlink included, without following it. */
        if (renameat(parent_fd, temp, parent_fd, base) < 0) {
                r = -errno;
                goto fail;
        }
        if (ret_size)
                *ret_size = size;
        if (ret_unsynced_fd)
                *ret_unsynced_fd = TAKE_FD(fd);
        return 0;

fail:
        (void) unlinkat(parent_fd, temp, 0);
        return r;
}

/* Calls member (ReadLog or ReadArtifact) for arg from *offset on until a call returns nothing,
 * writing what comes to dest and advancing *offset. With dest_broken, a dest that fails is marked
 * broken and no longer written, and the reading goes on; without, its failure is the error. */
static int copy_chunks(Client *c, const char *what, const char *path, const char *member, const char *arg,
                       uint64_t *offset, int dest, bool *dest_broken) {
        TermEscape esc;

        /* Logs copied to a terminal are escaped (term-escape.h); to a file or pipe, byte for byte.
         * A sequence cut between two calls shows as bytes. */
        term_escape_init(&esc, dest_broken ? dest : -EBADF);
        for (;;) {
                _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
                _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                const void *data = NULL;
                size_t n = 0;
                int r;

                r = client_call_method(c, path, SKILLD_BUS_RUN, member, &e, &reply, "stt", arg, *offset,
                                       (uint64_t) READ_CHUNK_BYTES);
                if (r < 0)
                        return client_log_error(what, &e, r);
                r = sym_sd_bus_message_read_array(reply, 'y', &data, &n);
                if (r < 0)
                        return log_error_errno(r, "%s: cannot read the reply: %m", what);
                if (n > READ_CHUNK_BYTES) {
                        log_error("%s: the service sent more than was asked for", what);
                        return -EBADMSG;
                }
                if (n == 0) {
                        if (dest_broken && !*dest_broken && term_escape_flush(&esc, dest) < 0)
                                *dest_broken = true;
                        return 0;
                }
                if (!dest_broken) {
                        r = loop_write(dest, data, n);
                        if (r < 0)
                                return log_error_errno(r, "%s: cannot keep what the service sent: %m", what);
                } else if (!*dest_broken && term_escape_write(&esc, dest, data, n) < 0)
                        *dest_broken = true;
                *offset += n;
        }
}

int client_copy_log(Client *c, const char *id, const char *path, const char *stream, uint64_t *offset,
                    int dest, bool *dest_broken) {
        _cleanup_free_ char *what = strdup_printf("run %s: %s", id, stream);

        if (!what)
                return log_oom();
        return copy_chunks(c, what, path, "ReadLog", stream, offset, dest, dest_broken);
}

/* Over SSH: the whole file, read in chunks, in a memfd of ours, so that what takes an fd works
 * the same. A snapshot: a log that grows later is not followed (client_copy_log() is). */
static int read_into_memfd(Client *c, const char *what, const char *path, const char *member,
                           const char *arg, int *ret_fd) {
        _cleanup_close_ int fd = -EBADF;
        uint64_t offset = 0;
        int r;

        fd = memfd_create("skillctl-remote", MFD_CLOEXEC);
        if (fd < 0)
                return log_error_errno(errno, "%s: cannot create a memfd: %m", what);
        r = copy_chunks(c, what, path, member, arg, &offset, fd, NULL);
        if (r < 0)
                return r;
        if (lseek(fd, 0, SEEK_SET) < 0)
                return log_error_errno(errno, "%s: cannot rewind the memfd: %m", what);
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* member is OpenLog or OpenArtifact; where no fd can pass, read_member (ReadLog, ReadArtifact)
 * fills one of ours. */
static int open_fd_call(Client *c, const char *what, const char *path, const char *member,
                        const char *read_member, const char *arg, int *ret_fd) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int fd, r;

        if (!c->can_pass_fds)
                return read_into_memfd(c, what, path, read_member, arg, ret_fd);
        r = client_call_method(c, path, SKILLD_BUS_RUN, member, &e, &reply, "s", arg);
        if (r < 0)
                return client_log_error(what, &e, r);
        r = sym_sd_bus_message_read(reply, "h", &fd);
        if (r < 0)
                return log_error_errno(r, "%s: cannot read the reply: %m", what);
        /* The message owns the fd it carries. */
        fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return log_error_errno(errno, "%s: cannot duplicate the fd: %m", what);
        *ret_fd = fd;
        return 0;
}

int client_open_artifact(Client *c, const char *id, const char *path, const char *artifact, int *ret_fd) {
        _cleanup_free_ char *what = NULL, *escaped = cescape(artifact);
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        what = strdup_printf("run %s: %s", id, strna(escaped));
        if (!what)
                return log_oom();
        r = open_fd_call(c, what, path, "OpenArtifact", "ReadArtifact", artifact, &fd);
        if (r < 0)
                return r;
        if (fstat(fd, &st) < 0)
                return log_error_errno(errno, "%s: cannot stat: %m", what);
        if (!S_ISREG(st.st_mode)) {
                log_error("%s: the service handed out something that is not a regular file", what);
                return -EBADFD;
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int client_open_log(Client *c, const char *id, const char *path, const char *stream, int *ret_fd) {
        _cleanup_free_ char *what = strdup_printf("run %s: %s", id, stream);

        if (!what)
                return log_oom();
        return open_fd_call(c, what, path, "OpenLog", "ReadLog", stream, ret_fd);
}

void artifact_info_free_many(ArtifactInfo *a, size_t n) {
        for (size_t i = 0; a && i < n; i++) {
                free(a[i].path);
                free(a[i].sha256);
        }
        free(a);
}

int artifact_list_read(sd_bus_message *m, ArtifactInfo **ret, size_t *ret_n) {
        ArtifactInfo *list = NULL;
        size_t n = 0;
        const char *p, *sha;
        uint64_t size;
        int r;

        r = sym_sd_bus_message_enter_container(m, 'a', "(sts)");
        if (r < 0)
                return r;
        while ((r = sym_sd_bus_message_read(m, "(sts)", &p, &size, &sha)) > 0) {
                ArtifactInfo *t = reallocarray(list, n + 1, sizeof(ArtifactInfo));

                if (!t) {
                        artifact_info_free_many(list, n);
                        return -ENOMEM;
                }
                list = t;
                list[n] = (ArtifactInfo) { .path = strdup(p), .size = size, .sha256 = strdup(sha) };
                if (!list[n].path || !list[n].sha256) {
                        artifact_info_free_many(list, n + 1);
                        return -ENOMEM;
                }
                n++;
        }
        if (r >= 0)
                r = sym_sd_bus_message_exit_container(m);
        if (r < 0) {
                artifact_info_free_many(list, n);
                return r;
        }
        *ret = list;
        *ret_n = n;
        return 0;
}

int client_list_artifacts(Client *c, const char *id, const char *path, ArtifactInfo **ret, size_t *ret_n) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *what = strdup_printf("run %s", id);
        int r;

        if (!what)
                return log_oom();
        r = client_call_method(c, path, SKILLD_BUS_RUN, "ListArtifacts", &e, &reply, NULL);
        if (r < 0)
                return client_log_error(what, &e, r);
        r = artifact_list_read(reply, ret, ret_n);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return log_error_errno(r, "%s: cannot parse the artifact list: %m", what);
        return 0;
}

static int fetch_one(Client *c, const char *id, const char *path, int dir_fd, const ArtifactInfo *a) {
        _cleanup_free_ char *error = NULL, *escaped = cescape(a->path);
        _cleanup_close_ int fd = -EBADF;
        int r;

        /* The path comes from the service: it must be one the loader would accept in a skill,
         * relative and without "..", before it names anything here. */
        r = loader_check_path(a->path, NULL, &error);
        if (r < 0) {
                log_error("run %s: refusing artifact path %s: %s", id, strna(escaped), strna(error));
                return -EBADMSG;
        }
        r = client_open_artifact(c, id, path, a->path, &fd);
        if (r < 0)
                return r;
        r = copy_fd_to_file_atomic(fd, dir_fd, a->path, a->sha256, NULL, NULL);
        if (r == -EBADMSG)
                return log_error_errno(r, "run %s: %s: the copy does not match the artifact's SHA-256, "
                                       "not written", id, strna(escaped));
        if (r == -ELOOP)
                return log_error_errno(r, "run %s: %s: a directory on the way is a symlink, not "
                                       "followed", id, strna(escaped));
        if (r < 0)
                return log_error_errno(r, "run %s: %s: cannot write: %m", id, strna(escaped));
        return 0;
}

int fetch_artifacts_listed(Client *c, const char *id, const char *path, int dir_fd, const ArtifactInfo *list,
                           size_t n, char * const *only) {
        int r, ret = 0;

        if (only)
                /* Asked for by name: those the list does not know are fetched without a hash to
                 * check, and the service says whether they exist. */
                STRV_FOREACH(p, only) {
                        ArtifactInfo a = { .path = *p, .sha256 = (char *) "" };

                        for (size_t i = 0; i < n; i++)
                                if (streq(list[i].path, *p))
                                        a = list[i];
                        r = fetch_one(c, id, path, dir_fd, &a);
                        if (r < 0 && ret == 0)
                                ret = r;
                }
        else
                for (size_t i = 0; i < n; i++) {
                        r = fetch_one(c, id, path, dir_fd, &list[i]);
                        if (r < 0 && ret == 0)
                                ret = r;
                }
        return ret;
}

int fetch_artifacts(Client *c, const char *id, const char *path, int dir_fd, char * const *only) {
        ArtifactInfo *list = NULL;
        size_t n = 0;
        int r;

        r = client_list_artifacts(c, id, path, &list, &n);
        if (r < 0)
                return r;
        r = fetch_artifacts_listed(c, id, path, dir_fd, list, n, only);
        artifact_info_free_many(list, n);
        return r;
}
