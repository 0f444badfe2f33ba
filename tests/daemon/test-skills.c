/* Tests for skills.c: the three directories of installed skills, which one wins, and installing,
 * replacing and removing in the service's own directory without ever touching the others. */
#include <dirent.h>
#include <sys/stat.h>

#include "skills.h"
#include "test-util.h"

typedef struct Fixture {
        TestDir d;
        SkillDirs dirs;
        char *admin, *installed, *vendor;
} Fixture;

static void write_skill(int dir_fd, const char *dir, const char *name, const char *body) {
        _cleanup_free_ char *md = NULL, *p = NULL, *q = NULL;

        md = strdup_printf("---\nname: %s\ndescription: %s\n---\n\n# %s\n", name, body, name);
        p = strdup_printf("%s/SKILL.md", dir);
        q = strdup_printf("%s/scripts/main.sh", dir);
        test_write_file(dir_fd, p, md, 0644);
        test_write_file(dir_fd, q, "echo hi\n", 0755);
}

static void fixture_init(Fixture *f) {
        f->d = test_dir_new();
        f->admin = strdup_printf("%s/etc", f->d.path);
        f->installed = strdup_printf("%s/var", f->d.path);
        f->vendor = strdup_printf("%s/usr", f->d.path);
        ck_assert_int_eq(mkdirat(f->d.fd, "etc", 0755), 0);
        ck_assert_int_eq(mkdirat(f->d.fd, "usr", 0755), 0);
        write_skill(f->d.fd, "usr/alpha", "alpha", "vendor alpha");
        write_skill(f->d.fd, "etc/beta", "beta", "admin beta");
        write_skill(f->d.fd, "usr/beta", "beta", "vendor beta");
        ck_assert_int_eq(skill_dirs_init(&f->dirs, f->admin, f->installed, f->vendor), 0);
}

static void fixture_done(Fixture *f) {
        skill_dirs_done(&f->dirs);
        free(f->admin);
        free(f->installed);
        free(f->vendor);
        test_dir_done(&f->d);
}

/* Stages a skill as InstallSkill's inspection would have unpacked it. */
static char *stage(Fixture *f, const char *name, const char *body) {
        _cleanup_close_ int fd = -EBADF;
        char *staging = NULL;

        ck_assert_int_eq(skills_new_staging(&f->dirs, &staging, &fd), 0);
        write_skill(fd, ".", name, body);
        return staging;
}

static const SkillInfo *find(const SkillInfo *l, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (streq(l[i].name, name))
                        return &l[i];
        return NULL;
}

START_TEST(test_precedence_and_list) {
        _cleanup_(fixture_done) Fixture f = {};
        SkillInfo *l = NULL;
        const SkillInfo *i;
        SkillOrigin o;
        size_t n = 0;
        int fd;

        fixture_init(&f);
        ck_assert_int_eq(skills_list(&f.dirs, &l, &n), 0);
        ck_assert_uint_eq(n, 2);
        i = find(l, n, "beta");
        ck_assert_ptr_nonnull(i);
        ck_assert_int_eq(i->origin, SKILL_ORIGIN_ADMIN);
        ck_assert_str_eq(i->description, "admin beta");
        ck_assert_uint_eq(strlen(i->hash), 64);
        i = find(l, n, "alpha");
        ck_assert_int_eq(i->origin, SKILL_ORIGIN_VENDOR);
        skill_infos_free(l, n);

        ck_assert_int_eq(skills_open(&f.dirs, "beta", &fd, &o), 0);
        ck_assert_int_eq(o, SKILL_ORIGIN_ADMIN);
        safe_close(fd);
        ck_assert_int_eq(skills_open(&f.dirs, "gamma", &fd, &o), -ENOPKG);
        ck_assert_int_eq(skills_open(&f.dirs, "../etc", &fd, &o), -EINVAL);
        ck_assert_str_eq(skill_origin_to_string(SKILL_ORIGIN_INSTALLED), "installed");
}
END_TEST

START_TEST(test_install_replace_remove) {
        _cleanup_(fixture_done) Fixture f = {};
        _cleanup_free_ char *s1 = NULL, *s2 = NULL, *s3 = NULL, *s4 = NULL, *error = NULL;
        SkillInfo *l = NULL;
        SkillOrigin o;
        size_t n = 0;
        int fd;

        fixture_init(&f);

        /* 1. A new name. */
        s1 = stage(&f, "gamma", "first gamma");
        ck_assert_int_eq(skills_install(&f.dirs, s1, "gamma", false, NULL), 0);
        ck_assert_int_eq(skills_open(&f.dirs, "gamma", &fd, &o), 0);
        ck_assert_int_eq(o, SKILL_ORIGIN_INSTALLED);
        safe_close(fd);

        /* 2. Taken: refused without replace, replaced with it; the old tree goes to the trash,
         *    which a purge empties. */
        s2 = stage(&f, "gamma", "second gamma");
        ck_assert_int_eq(skills_install(&f.dirs, s2, "gamma", false, &error), -EEXIST);
        ck_assert_ptr_nonnull(strstr(error, "installed already"));
        ck_assert_int_eq(skills_install(&f.dirs, s2, "gamma", true, NULL), 0);
        ck_assert_int_eq(skills_list(&f.dirs, &l, &n), 0);
        ck_assert_str_eq(find(l, n, "gamma")->description, "second gamma");
        skill_infos_free(l, n);
        ck_assert_uint_eq(test_count_entries(f.installed), 2); /* gamma and the trash */
        skills_purge(&f.dirs, false);
        ck_assert_uint_eq(test_count_entries(f.installed), 1);

        /* 3. An admin's skill cannot be replaced; a vendor's is shadowed. */
        s3 = stage(&f, "beta", "mine");
        free(error);
        error = NULL;
        ck_assert_int_eq(skills_install(&f.dirs, s3, "beta", true, &error), -EEXIST);
        ck_assert_ptr_nonnull(strstr(error, "administrator"));
        skills_drop_staging(&f.dirs, s3);
        s4 = stage(&f, "alpha", "installed alpha");
        ck_assert_int_eq(skills_install(&f.dirs, s4, "alpha", false, NULL), 0);
        ck_assert_int_eq(skills_open(&f.dirs, "alpha", &fd, &o), 0);
        ck_assert_int_eq(o, SKILL_ORIGIN_INSTALLED);
        safe_close(fd);

        /* 4. Removing: ours go (the vendor's alpha shows again), the host's are not ours. */
        ck_assert_int_eq(skills_remove(&f.dirs, "alpha", NULL), 0);
        ck_assert_int_eq(skills_open(&f.dirs, "alpha", &fd, &o), 0);
        ck_assert_int_eq(o, SKILL_ORIGIN_VENDOR);
        safe_close(fd);
        free(error);
        error = NULL;
        ck_assert_int_eq(skills_remove(&f.dirs, "beta", &error), -EROFS);
        ck_assert_ptr_nonnull(strstr(error, "part of the host"));
        ck_assert_int_eq(skills_remove(&f.dirs, "delta", NULL), -ENOPKG);
        ck_assert_int_eq(skills_remove(&f.dirs, "gamma", NULL), 0);
        skills_purge(&f.dirs, true);
        ck_assert_uint_eq(test_count_entries(f.installed), 0);
}
END_TEST

START_TEST(test_staging_is_private_and_purged) {
        _cleanup_(fixture_done) Fixture f = {};
        _cleanup_free_ char *s = NULL;
        struct stat st;

        fixture_init(&f);
        s = stage(&f, "gamma", "x");
        ck_assert(s[0] == '.');
        ck_assert_int_eq(fstatat(f.d.fd, "var", &st, 0), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0755);
        /* A staging folder is not a skill, and a start-up purge takes leftovers away. */
        ck_assert_int_eq(skills_open(&f.dirs, "gamma", &(int) { -1 }, NULL), -ENOPKG);
        skills_purge(&f.dirs, false);
        ck_assert_uint_eq(test_count_entries(f.installed), 1);
        skills_purge(&f.dirs, true);
        ck_assert_uint_eq(test_count_entries(f.installed), 0);
}
END_TEST

int main(void) {
        Suite *s = suite_create("skills");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_precedence_and_list);
        tcase_add_test(tc, test_install_replace_remove);
        tcase_add_test(tc, test_staging_is_private_and_purged);
        suite_add_tcase(s, tc);
        return test_run_suite(s);
}
