/* Copying artifacts out of /out/files once every process of the run is gone.
 *
 * The source is a directory fd into the run's private /out tmpfs, written by an untrusted skill.
 * Nothing there is followed: each entry is looked at with AT_SYMLINK_NOFOLLOW and opened with
 * O_NOFOLLOW relative to its parent's fd; only regular files and directories are copied, and
 * anything else (symlinks, FIFOs, sockets, names that are not clean UTF-8) is skipped and
 * reported. /out is its own file system, so no hard link there can lead anywhere else. Counts,
 * depth and the bytes written out are capped. The tmpfs caps the blocks a skill can fill, not
 * what a copy writes: a sparse file, or one file under many hard-linked names, costs /out almost
 * nothing and the host its full size each time, so the copy stops at the size of /out. */
#include <dirent.h>
#include <sys/stat.h>

#include "error.h"
#include "fileio.h"
#include "hash.h"
#include "sandbox-internal.h"

#define ARTIFACTS_DEPTH_MAX 32U

typedef struct CopyContext {
        RunResult *result;
        uint64_t max_entries;
        uint64_t bytes_left;            /* of max_bytes, for the files still to come */
        char **error;
} CopyContext;

static int add_artifact(RunResult *r, const char *path, bool directory, uint64_t size, const char *sha) {
        RunArtifact *a;

        a = reallocarray(r->artifacts, r->n_artifacts + 1, sizeof(RunArtifact));
        if (!a)
                return -ENOMEM;
        r->artifacts = a;
        a = &r->artifacts[r->n_artifacts];
        *a = (RunArtifact) { .directory = directory, .size = size };
        a->path = strdup(path);
        if (!a->path)
                return -ENOMEM;
        if (sha)
                memcpy(a->sha256, sha, sizeof(a->sha256));
        r->n_artifacts++;
        return 0;
}

static int copy_file(int src_dir_fd, int dst_dir_fd, const char *name, const char *path, CopyContext *ctx) {
        _cleanup_(sha256_freep) Sha256 *h = NULL;
        _cleanup_close_ int in = -EBADF, out = -EBADF;
        char hex[SHA256_HEX_SIZE];
        uint64_t size = 0;
        struct stat st;
        int r;

        /* O_NONBLOCK: if this were a FIFO after all, the open must not hang. */
        in = openat(src_dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (in < 0) {
                run_result_add_skipped(ctx->result, path, "unreadable");
                return 0;
        }
        if (fstat(in, &st) < 0)
                return error_setf(ctx->error, -errno, "Failed to stat artifact %s: %m", path);
        if (!S_ISREG(st.st_mode)) {
                run_result_add_skipped(ctx->result, path, "not a regular file");
                return 0;
        }
        /* Every process of the run is gone, so the size cannot change under us. */
        if ((uint64_t) st.st_size > ctx->bytes_left) {
                run_result_add_skipped(ctx->result, path, "too large");
                ctx->result->artifacts_truncated = true;
                return 0;
        }

        out = openat(dst_dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (out < 0)
                return error_setf(ctx->error, -errno, "Failed to create artifact %s: %m", path);
        r = sha256_new_sized((uint64_t) st.st_size, &h);
        if (r < 0)
                return error_setf(ctx->error, r, "Failed to hash artifact %s", path);

        for (;;) {
                char buf[64 * 1024];
                ssize_t n;

                n = read(in, buf, sizeof(buf));
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return error_setf(ctx->error, -errno, "Failed to read artifact %s: %m", path);
                }
                if (n == 0)
                        break;
                if ((uint64_t) n > ctx->bytes_left - size)
                        return error_setf(ctx->error, -EFBIG, "Artifact %s grew while it was copied", path);
                r = sha256_update(h, buf, n);
                if (r >= 0)
                        r = loop_write(out, buf, n);
                if (r < 0)
                        return error_setf(ctx->error, r, "Failed to copy artifact %s: %s", path,
                                          strerror(-r));
                size += n;
        }
        r = sha256_final_hex(h, hex);
        if (r < 0)
                return error_setf(ctx->error, r, "Failed to hash artifact %s", path);
        ctx->bytes_left -= size;
        return add_artifact(ctx->result, path, false, size, hex);
}

static int name_cmp(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

/* Reads the names in a directory, sorted, so results are the same from run to run. */
static int list_dir(int dir_fd, char ***ret) {
        _cleanup_strv_free_ char **names = NULL;
        DIR *d;
        struct dirent *de;
        int fd, r = 0;

        fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                safe_close(fd);
                return -errno;
        }
        while ((de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                r = strv_extend(&names, de->d_name);
                if (r < 0)
                        break;
        }
        closedir(d);
        if (r < 0)
                return r;
        if (names)
                qsort(names, strv_length(names), sizeof(char *), name_cmp);
        *ret = TAKE_PTR(names);
        return 0;
}

static int copy_tree(int src_fd, int dst_fd, const char *prefix, unsigned depth, CopyContext *ctx) {
        _cleanup_strv_free_ char **names = NULL;
        int r;

        r = list_dir(src_fd, &names);
        if (r < 0)
                return error_setf(ctx->error, r, "Failed to list /out/files/%s: %s", prefix ?: "",
                                  strerror(-r));

        STRV_FOREACH(name, names) {
                _cleanup_free_ char *path = NULL;
                struct stat st;

                path = prefix ? strdup_printf("%s/%s", prefix, *name) : strdup(*name);
                if (!path)
                        return -ENOMEM;

                if (!utf8_is_valid(*name, strlen(*name)) || string_has_cc(*name, strlen(*name))) {
                        _cleanup_free_ char *escaped = cescape(path);

                        run_result_add_skipped(ctx->result, escaped ?: "?", "name is not printable UTF-8");
                        continue;
                }
                if (fstatat(src_fd, *name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return error_setf(ctx->error, -errno, "Failed to stat artifact %s: %m", path);

                if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
                        run_result_add_skipped(ctx->result, path,
                                               S_ISLNK(st.st_mode) ? "symlink" :
                                               S_ISFIFO(st.st_mode) ? "fifo" :
                                               S_ISSOCK(st.st_mode) ? "socket" : "device");
                        continue;
                }
                if (ctx->result->n_artifacts >= ctx->max_entries) {
                        ctx->result->artifacts_truncated = true;
                        return 0;
                }

                if (S_ISREG(st.st_mode)) {
                        r = copy_file(src_fd, dst_fd, *name, path, ctx);
                        if (r < 0)
                                return r;
                } else {
                        _cleanup_close_ int sub_src = -EBADF, sub_dst = -EBADF;

                        if (depth >= ARTIFACTS_DEPTH_MAX) {
                                run_result_add_skipped(ctx->result, path, "too deep");
                                continue;
                        }
                        sub_src = openat(src_fd, *name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (sub_src < 0) {
                                run_result_add_skipped(ctx->result, path, "unreadable");
                                continue;
                        }
                        if (mkdirat(dst_fd, *name, 0755) < 0 && errno != EEXIST)
                                return error_setf(ctx->error, -errno, "Failed to create %s: %m", path);
                        sub_dst = openat(dst_fd, *name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (sub_dst < 0)
                                return error_setf(ctx->error, -errno, "Failed to open %s: %m", path);
                        r = add_artifact(ctx->result, path, true, 0, NULL);
                        if (r < 0)
                                return r;
                        r = copy_tree(sub_src, sub_dst, path, depth + 1, ctx);
                        if (r < 0)
                                return r;
                }
                if (ctx->result->artifacts_truncated)
                        return 0;
        }
        return 0;
}

int sandbox_copy_artifacts(int out_fd, int dest_fd, uint64_t max_entries, uint64_t max_bytes,
                           RunResult *result, char **error) {
        _cleanup_close_ int src = -EBADF;
        CopyContext ctx = {
                .result = result,
                .max_entries = max_entries,
                .bytes_left = max_bytes,
                .error = error,
        };

        /* The skill may have replaced /out/files by a symlink or a file: then there is nothing
         * to copy, and that is worth saying. */
        src = openat(out_fd, "files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (src < 0) {
                run_result_add_skipped(result, ".", "/out/files is not a directory");
                return 0;
        }
        return copy_tree(src, dest_fd, NULL, 0, &ctx);
}
