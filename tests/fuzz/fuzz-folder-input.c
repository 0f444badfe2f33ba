/* Fuzz target "folder-input": bytes as the zip of a folder input (--file NAME=DIR, or the
 * "folders" option of Run), through a memfd, unpacked as the engine does before a run
 * (sandbox_folder_input_unpack()), then copied into scratch/work/NAME as the sandbox's init does.
 *
 * Promises checked after every input: a refusal carries a documented code and a message safe for a
 * terminal, and leaves no private directory behind; a success unpacked a tree of regular files
 * and directories only, no more bytes than the cap, that passes the loader's directory rules;
 * the copy holds the same tree, with nothing beside it in scratch/work; folder_input_done()
 * removes the private directory; no fd leaked. */
#include <sys/stat.h>

#include "fuzz.h"
#include "loader.h"
#include "sandbox-internal.h"

/* Far below the engine's 1G, so that a fuzzer's few KiB run into the cap. */
#define FUZZ_MAX_BYTES (256U * 1024U)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_close_ int zip_fd = -EBADF, work_fd = -EBADF, dst_fd = -EBADF;
        _cleanup_free_ char *error = NULL, *dir = NULL;
        FolderInput f = { .dir_fd = -EBADF };
        int scratch = fuzz_scratch_fd();
        int fd_before = fuzz_lowest_free_fd();
        uint64_t budget = FUZZ_MAX_BYTES;
        struct stat st;
        int r;

        zip_fd = fuzz_memfd("folder.zip", data, size);
        r = sandbox_folder_input_unpack(zip_fd, FUZZ_MAX_BYTES, &f, &error);
        if (r < 0) {
                fuzz_assert(fuzz_loader_code_is_documented(r), "undocumented error %d: %s", r, strna(error));
                fuzz_assert(r == -ENOMEM || error, "refusal %d without a message", r);
                fuzz_assert(!error || fuzz_text_is_safe(error), "unsafe message: %s", error);
                fuzz_assert(!f.dir && f.dir_fd < 0, "output set on failure");
        } else {
                LoaderLimits limits = LOADER_LIMITS_DEFAULT;
                _cleanup_free_ char *copy = NULL;
                char h1[65], h2[65];

                fuzz_assert(!error, "success with a message: %s", error);
                fuzz_assert(f.bytes <= FUZZ_MAX_BYTES, "%" PRIu64 " bytes unpacked", f.bytes);
                /* Only files and directories, within the rules a folder must meet. */
                limits.max_total_bytes = limits.max_file_bytes = FUZZ_MAX_BYTES;
                r = loader_check_tree(f.dir_fd, &limits, &error);
                fuzz_assert(r >= 0, "an unpacked folder fails the directory rules: %s", strna(error));

                fuzz_assert(mkdirat(scratch, "work", 0755) >= 0, "%m");
                work_fd = openat(scratch, "work", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                fuzz_assert(work_fd >= 0);
                fuzz_assert(mkdirat(work_fd, "data", 0700) >= 0, "%m");
                dst_fd = openat(work_fd, "data", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                fuzz_assert(dst_fd >= 0);
                r = sandbox_folder_input_copy(f.dir_fd, dst_fd, getuid(), getgid(), &budget, 1);
                fuzz_assert(r >= 0, "copying an unpacked folder failed: %s", strerror(-r));
                fuzz_assert(FUZZ_MAX_BYTES - budget == f.bytes, "copied %" PRIu64 " of %" PRIu64 " bytes",
                            FUZZ_MAX_BYTES - budget, f.bytes);
                /* The same paths, kinds, modes and contents. */
                fuzz_assert(skill_tree_hash(f.dir_fd, h1, NULL) >= 0 && skill_tree_hash(dst_fd, h2, NULL) >= 0);
                fuzz_assert(streq(h1, h2), "the copy differs from the unpacked folder");
                copy = fuzz_list_dir(work_fd);
                fuzz_assert(streq_ptr(copy, "data"), "work holds \"%s\"", copy);

                dir = strdup(f.dir);
                fuzz_assert(dir);
                dst_fd = safe_close(dst_fd);
                work_fd = safe_close(work_fd);
                fuzz_assert(rm_rf_at(scratch, "work") >= 0);
        }
        folder_input_done(&f);
        fuzz_assert(!dir || (lstat(dir, &st) < 0 && errno == ENOENT), "%s was left behind", dir);

        zip_fd = safe_close(zip_fd);
        fuzz_assert(fuzz_lowest_free_fd() == fd_before, "an fd leaked");
        return 0;
}
