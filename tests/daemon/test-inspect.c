/* Tests for inspect.c: what the service learns about a skill it is handed, in process and from a
 * forked inspector, before it asks polkit about it. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "fileio.h"
#include "inspect.h"
#include "loader.h"
#include "test-util.h"

static void write_skill(int dir_fd, const char *dir, const char *name) {
        _cleanup_free_ char *md = NULL, *p = NULL, *q = NULL;

        md = strdup_printf("---\nname: %s\ndescription: A skill for the inspection tests.\n---\n\n# %s\n",
                           name, name);
        p = strdup_printf("%s/SKILL.md", dir);
        q = strdup_printf("%s/scripts/main.py", dir);
        ck_assert_ptr_nonnull(md);
        test_write_file(dir_fd, p, md, 0644);
        test_write_file(dir_fd, q, "print('hi')\n", 0644);
        free(q);
        q = strdup_printf("%s/scripts/other.sh", dir);
        test_write_file(dir_fd, q, "echo other\n", 0755);
}

/* A .skill archive of dir (in a memfd) and the tree hash of the folder. */
static int pack(const TestDir *d, const char *dir, const char *name, char hash[static 65]) {
        _cleanup_close_ int fd = openat(d->fd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int out = memfd_create("skill", MFD_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_ge(out, 0);
        ck_assert_int_eq(skill_package(fd, name, out, NULL), 0);
        ck_assert_int_eq(skill_tree_hash(fd, hash, NULL), 0);
        return out;
}

static int new_target(const TestDir *d, const char *name) {
        int fd;

        ck_assert_int_eq(mkdirat(d->fd, name, 0755), 0);
        fd = openat(d->fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        return fd;
}

START_TEST(test_archive) {
        _cleanup_test_dir_ TestDir d = test_dir_new();
        _cleanup_(inspection_done) Inspection i = {};
        _cleanup_close_ int zip = -EBADF, target = -EBADF;
        char hash[65];

        write_skill(d.fd, "src", "demo");
        zip = pack(&d, "src", "demo", hash);
        target = new_target(&d, "t");
        ck_assert_int_eq(inspect_archive(zip, target, NULL, INSPECT_ENTRY | INSPECT_LINT, &i), 0);
        ck_assert_int_eq(i.error_errno, 0);
        ck_assert_str_eq(i.name, "demo");
        ck_assert_str_eq(i.description, "A skill for the inspection tests.");
        ck_assert_str_eq(i.script, "scripts/main.py");
        ck_assert_str_eq(i.interpreter, "/usr/bin/python3");
        /* The same tree, unpacked or not, hashes the same. */
        ck_assert_str_eq(i.hash, hash);
        ck_assert_int_eq(faccessat(target, "scripts/main.py", F_OK, 0), 0);
}
END_TEST

static DIR *closedir_safe(DIR *d) {
        if (d)
                (void) closedir(d);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir_safe);

/* The archive is read from a private copy, or in place when sealed: either way the caller's file
 * offset stays where it was, and nothing but the tree lands in the target. */
START_TEST(test_archive_copy_and_seals) {
        _cleanup_test_dir_ TestDir d = test_dir_new();
        _cleanup_close_ int zip = -EBADF, sealed = -EBADF;
        _cleanup_free_ char *bytes = NULL;
        size_t size = 0;
        char hash[65];

        write_skill(d.fd, "src", "demo");
        zip = pack(&d, "src", "demo", hash);
        ck_assert_int_eq(lseek(zip, 0, SEEK_SET), 0);
        ck_assert_int_eq(read_full_fd(zip, 1 << 20, &bytes, &size), 0);
        sealed = memfd_create("sealed", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        ck_assert_int_ge(sealed, 0);
        ck_assert_int_eq(loop_write(sealed, bytes, size), 0);
        ck_assert_int_eq(fcntl(sealed, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW), 0);

        for (int k = 0; k < 2; k++) {
                _cleanup_(inspection_done) Inspection i = {};
                _cleanup_free_ char *name = strdup_printf("t%d", k);
                _cleanup_close_ int target = new_target(&d, name), fd = -EBADF;
                _cleanup_(closedir_safep) DIR *dir = NULL;
                struct dirent *de;
                size_t n = 0;

                ck_assert_int_eq(lseek(k == 0 ? zip : sealed, 7, SEEK_SET), 7);
                ck_assert_int_eq(inspect_archive(k == 0 ? zip : sealed, target, NULL, INSPECT_ENTRY, &i), 0);
                ck_assert_int_eq(i.error_errno, 0);
                ck_assert_str_eq(i.hash, hash);
                ck_assert_int_eq(lseek(k == 0 ? zip : sealed, 0, SEEK_CUR), 7);
                fd = openat(target, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                dir = fdopendir(TAKE_FD(fd));
                ck_assert_ptr_nonnull(dir);
                while ((de = readdir(dir)))
                        if (!streq(de->d_name, ".") && !streq(de->d_name, "..")) {
                                ck_assert_msg(streq(de->d_name, "SKILL.md") || streq(de->d_name, "scripts"),
                                              "unexpected %s in the target", de->d_name);
                                n++;
                        }
                ck_assert_uint_eq(n, 2);
        }
}
END_TEST

START_TEST(test_script_override) {
        _cleanup_test_dir_ TestDir d = test_dir_new();
        _cleanup_(inspection_done) Inspection i = {};
        _cleanup_close_ int zip = -EBADF, target = -EBADF;
        char hash[65];

        write_skill(d.fd, "src", "demo");
        zip = pack(&d, "src", "demo", hash);
        target = new_target(&d, "t");
        ck_assert_int_eq(inspect_archive(zip, target, "scripts/other.sh", INSPECT_ENTRY, &i), 0);
        ck_assert_str_eq(i.script, "scripts/other.sh");
        ck_assert_str_eq(i.interpreter, "/usr/bin/bash");

        inspection_done(&i);
        safe_close(target);
        target = new_target(&d, "t2");
        ck_assert_int_eq(lseek(zip, 0, SEEK_SET), 0);
        ck_assert_int_eq(inspect_archive(zip, target, "../etc/passwd", INSPECT_ENTRY, &i), 0);
        ck_assert_int_ne(i.error_errno, 0);
        ck_assert_ptr_null(i.name);
}
END_TEST

START_TEST(test_invalid_name) {
        _cleanup_test_dir_ TestDir d = test_dir_new();
        _cleanup_(inspection_done) Inspection i = {};
        _cleanup_close_ int dir = -EBADF;

        write_skill(d.fd, "Bad_Name", "Bad_Name");
        dir = openat(d.fd, "Bad_Name", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_eq(inspect_directory(dir, "Bad_Name", NULL, INSPECT_ENTRY, &i), 0);
        ck_assert_int_eq(i.error_errno, EBADMSG);
        ck_assert_ptr_nonnull(strstr(i.error, "not a valid skill name"));
}
END_TEST

START_TEST(test_lint_only_for_installs) {
        _cleanup_test_dir_ TestDir d = test_dir_new();
        _cleanup_(inspection_done) Inspection i = {};
        _cleanup_close_ int dir = -EBADF;

        /* The folder is "demo", the skill says "other": a lint error, which only installing
         * (INSPECT_LINT) cares about. */
        write_skill(d.fd, "demo", "other");
        dir = openat(d.fd, "demo", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_eq(inspect_directory(dir, "demo", NULL, INSPECT_ENTRY, &i), 0);
        ck_assert_int_eq(i.error_errno, 0);
        ck_assert_str_eq(i.name, "other");
        inspection_done(&i);
        ck_assert_int_eq(inspect_directory(dir, "demo", NULL, INSPECT_LINT, &i), 0);
        ck_assert_int_eq(i.error_errno, EBADMSG);
        ck_assert_ptr_nonnull(strstr(i.error, "SKILL.md"));
}
END_TEST

START_TEST(test_symlink_refused) {
        _cleanup_test_dir_ TestDir d = test_dir_new();
        _cleanup_(inspection_done) Inspection i = {};
        _cleanup_close_ int dir = -EBADF;

        write_skill(d.fd, "demo", "demo");
        ck_assert_int_eq(symlinkat("/etc/shadow", d.fd, "demo/scripts/link"), 0);
        dir = openat(d.fd, "demo", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_eq(inspect_directory(dir, "demo", NULL, INSPECT_ENTRY, &i), 0);
        ck_assert_int_eq(i.error_errno, EBADMSG);
        ck_assert_ptr_nonnull(strstr(i.error, "link"));
}
END_TEST

START_TEST(test_not_a_zip) {
        _cleanup_test_dir_ TestDir d = test_dir_new();
        _cleanup_(inspection_done) Inspection i = {};
        _cleanup_close_ int fd = memfd_create("junk", MFD_CLOEXEC), target = new_target(&d, "t");

        static const char junk[] = "PK\003\004 but nothing else";

        ck_assert_int_eq(loop_write(fd, junk, sizeof(junk) - 1), 0);
        ck_assert_int_eq(inspect_archive(fd, target, NULL, INSPECT_ENTRY, &i), 0);
        ck_assert_int_eq(i.error_errno, EBADMSG);
        ck_assert_ptr_nonnull(i.error);
}
END_TEST

START_TEST(test_json_roundtrip) {
        _cleanup_(inspection_done) Inspection a = {
                .name = strdup("demo"),
                .description = strdup("d\"q"),
                .hash = strdup("00ff"),
                .script = strdup("scripts/main.sh"),
        }, b = {}, c = {};
        _cleanup_free_ char *text = NULL;

        ck_assert_int_eq(inspection_to_json(&a, &text), 0);
        ck_assert_int_eq(inspection_from_json(text, &b), 0);
        ck_assert_str_eq(b.name, "demo");
        ck_assert_str_eq(b.description, "d\"q");
        ck_assert_str_eq(b.script, "scripts/main.sh");
        ck_assert_ptr_null(b.interpreter);
        ck_assert_int_eq(b.error_errno, 0);

        /* A success without a name or hash is no success. */
        ck_assert_int_eq(inspection_from_json("{\"errno\": 0}", &c), -EBADMSG);
        ck_assert_int_eq(inspection_from_json("[]", &c), -EBADMSG);
}
END_TEST

START_TEST(test_spawned) {
        _cleanup_test_dir_ TestDir d = test_dir_new();
        _cleanup_(inspection_done) Inspection i = {};
        _cleanup_close_ int zip = -EBADF, target = -EBADF, result = -EBADF;
        char hash[65];
        pid_t pid;
        int status;

        write_skill(d.fd, "src", "demo");
        zip = pack(&d, "src", "demo", hash);
        target = new_target(&d, "t");
        ck_assert_int_eq(inspect_spawn(zip, target, NULL, NULL, INSPECT_ENTRY, &pid, &result), 0);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        ck_assert_int_eq(inspection_read(result, &i), 0);
        ck_assert_int_eq(i.error_errno, 0);
        ck_assert_str_eq(i.hash, hash);
        ck_assert_str_eq(i.script, "scripts/main.py");

        /* A child that wrote nothing (it died) or half an answer gave none; i stays as it was. */
        safe_close(result);
        result = memfd_create("empty", MFD_CLOEXEC);
        ck_assert_int_ge(result, 0);
        ck_assert_int_eq(inspection_read(result, &i), -EIO);
        ck_assert_str_eq(i.hash, hash);
        ck_assert_int_eq(write(result, "{\"errno\": 0, \"name\": ", 21), 21);
        ck_assert_int_eq(inspection_read(result, &i), -EIO);
        ck_assert_str_eq(i.hash, hash);
}
END_TEST

int main(void) {
        Suite *s = suite_create("inspect");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_archive);
        tcase_add_test(tc, test_archive_copy_and_seals);
        tcase_add_test(tc, test_script_override);
        tcase_add_test(tc, test_invalid_name);
        tcase_add_test(tc, test_lint_only_for_installs);
        tcase_add_test(tc, test_symlink_refused);
        tcase_add_test(tc, test_not_a_zip);
        tcase_add_test(tc, test_json_roundtrip);
        tcase_add_test(tc, test_spawned);
        suite_add_tcase(s, tc);
        return test_run_suite(s);
}
