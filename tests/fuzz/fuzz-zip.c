/* Fuzz target "zip": bytes as a .skill archive (through a memfd, as the daemon receives them)
 * extracted into scratch/target, then everything that reads an extracted tree.
 *
 * Promises checked after every input: scratch holds "target" and nothing else (no entry landed
 * beside or above it), a refusal carries a documented code and a message safe for a terminal
 * and leaves the target empty, no fd leaked. After a success: the tree passes the directory
 * rules under the same limits (what extraction accepts, loading a folder accepts), it hashes,
 * it packages, and the package extracts to a tree with the same content hash; SKILL.md parsing,
 * lint and entry point resolution run on it without complaint from the sanitizers.
 *
 * The limits are far below the defaults so that inputs a fuzzer can reach (a few KiB) run into
 * every cap: the code paths are the same, only the numbers differ. */
#include <sys/stat.h>

#include "entry.h"
#include "fuzz.h"
#include "lint.h"
#include "loader.h"
#include "skill.h"

static const LoaderLimits fuzz_limits = {
        .max_entries = 64,
        .max_total_bytes = 1024 * 1024,
        .max_file_bytes = 256 * 1024,
        .max_ratio = 200,
        .ratio_min_bytes = 64 * 1024,
        .max_depth = 8,
        .max_path = 128,
};

#define PACKAGE_NAME "fuzz-pkg"

static int open_dir_at(int dir_fd, const char *path) {
        int fd = openat(dir_fd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        fuzz_assert(fd >= 0, "%s: %m", path);
        return fd;
}

static void assert_listing(int dir_fd, const char *expected, const char *what) {
        _cleanup_free_ char *l = fuzz_list_dir(dir_fd);

        fuzz_assert(streq(l, expected), "%s holds \"%s\", expected \"%s\"", what, l, expected);
}

/* Package the tree, extract the package next to it and compare content hashes. */
static void check_round_trip(int scratch, int tree_fd, const char *hash) {
        _cleanup_close_ int pkg_fd = -EBADF, again_fd = -EBADF, tree2_fd = -EBADF;
        _cleanup_free_ char *error = NULL, *top = NULL;
        LoaderLimits limits = fuzz_limits;
        char hash2[65];
        int r;

        pkg_fd = fuzz_memfd("package", NULL, 0);
        r = skill_package(tree_fd, PACKAGE_NAME, pkg_fd, &error);
        fuzz_assert(r >= 0, "an extracted tree does not package: %s", strna(error));

        /* The package adds its folder (a level and a name, when it is not recognized as the top
         * folder because there is no SKILL.md), every directory as an entry, and deflates what
         * may have been stored: room for all of that. */
        limits.max_entries = UINT64_MAX;
        limits.max_depth++;
        limits.max_path += strlen(PACKAGE_NAME "/");
        limits.max_ratio = UINT64_MAX;
        fuzz_assert(mkdirat(scratch, "again", 0755) >= 0);
        again_fd = open_dir_at(scratch, "again");
        r = loader_extract_zip(pkg_fd, again_fd, &limits, &top, &error);
        fuzz_assert(r >= 0, "a package does not extract: %s", strna(error));
        fuzz_assert(!top || streq(top, PACKAGE_NAME), "top folder %s", top);

        tree2_fd = top ? TAKE_FD(again_fd) : open_dir_at(again_fd, PACKAGE_NAME);
        r = skill_tree_hash(tree2_fd, hash2, &error);
        fuzz_assert(r >= 0, "the re-extracted tree does not hash: %s", strna(error));
        fuzz_assert(streq(hash, hash2), "the round trip changed the content hash");
        fuzz_assert(rm_rf_at(scratch, "again") >= 0);
}

/* What runs on a loaded skill before its script does. */
static void check_skill(int tree_fd) {
        _cleanup_(lint_report_freep) LintReport *report = lint_report_new();
        _cleanup_(skill_entry_done) SkillEntry entry = {};
        _cleanup_strv_free_ char **scripts = NULL;
        _cleanup_(skill_freep) Skill *s = NULL;
        _cleanup_free_ char *error = NULL, *entry_error = NULL;

        fuzz_assert(report);
        if (skill_load_at(tree_fd, &s, &error) >= 0)
                fuzz_assert(skill_lint(s, NULL, report) >= 0);
        (void) skill_list_scripts(tree_fd, &scripts);
        if (skill_resolve_entry(s, tree_fd, NULL, &entry, &entry_error) >= 0) {
                struct stat st;

                fuzz_assert(fstatat(tree_fd, entry.script, &st, AT_SYMLINK_NOFOLLOW) >= 0 &&
                            S_ISREG(st.st_mode), "entry point %s", entry.script);
        }
}

static void check_extracted(int scratch, int target_fd, const char *top) {
        _cleanup_free_ char *error = NULL;
        char hash[65];
        int r;

        fuzz_assert(!top || (!isempty(top) && !strchr(top, '/') && loader_check_path(top, NULL, NULL) >= 0),
                    "top folder \"%s\"", top);

        r = loader_check_tree(target_fd, &fuzz_limits, &error);
        fuzz_assert(r >= 0, "an extracted tree fails the directory rules: %s", strna(error));
        r = skill_tree_hash(target_fd, hash, &error);
        fuzz_assert(r >= 0, "an extracted tree does not hash: %s", strna(error));

        check_round_trip(scratch, target_fd, hash);
        check_skill(target_fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_close_ int archive_fd = -EBADF, target_fd = -EBADF;
        _cleanup_free_ char *error = NULL, *top = NULL;
        int scratch = fuzz_scratch_fd();
        int fd_before = fuzz_lowest_free_fd();
        int r;

        fuzz_assert(mkdirat(scratch, "target", 0755) >= 0, "%m");
        target_fd = open_dir_at(scratch, "target");
        archive_fd = fuzz_memfd("skill.zip", data, size);

        r = loader_extract_zip(archive_fd, target_fd, &fuzz_limits, &top, &error);
        assert_listing(scratch, "target", "the scratch directory");
        if (r < 0) {
                fuzz_assert(fuzz_loader_code_is_documented(r), "undocumented error %d: %s", r, strna(error));
                fuzz_assert(r == -ENOMEM || error, "refusal %d without a message", r);
                fuzz_assert(!error || fuzz_text_is_safe(error), "unsafe message: %s", error);
                fuzz_assert(!top, "top folder set on failure");
                assert_listing(target_fd, "", "the target after a refusal");
        } else {
                fuzz_assert(!error, "success with a message: %s", error);
                check_extracted(scratch, target_fd, top);
        }
        assert_listing(scratch, "target", "the scratch directory");

        target_fd = safe_close(target_fd);
        archive_fd = safe_close(archive_fd);
        fuzz_assert(rm_rf_at(scratch, "target") >= 0);
        fuzz_assert(fuzz_lowest_free_fd() == fd_before, "an fd leaked");
        return 0;
}
