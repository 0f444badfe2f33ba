/* Tests for skilld/daemon/bus-errors: each errno of the table becomes its named error with the
 * message given, other errnos keep sd-bus's generic names, a client that registered the table gets
 * the errno back from the name, and every name is documented in the introspection XML. */
#include "bus-errors.h"
#include "fileio.h"
#include "test-util.h"

static const struct {
        int error;
        const char *name;
} table[] = {
        { ESRCH, SKILLD_ERROR_NO_SUCH_RUN },
        { ENOPKG, SKILLD_ERROR_NO_SUCH_SKILL },
        { EBADMSG, SKILLD_ERROR_INVALID_SKILL },
        { EEXIST, SKILLD_ERROR_SKILL_EXISTS },
        { E2BIG, SKILLD_ERROR_LIMIT_EXCEEDED },
        { EUSERS, SKILLD_ERROR_QUOTA_EXCEEDED },
        { EDQUOT, SKILLD_ERROR_QUOTA_EXCEEDED },
        { ENOSPC, SKILLD_ERROR_NO_SPACE },
        { EBUSY, SKILLD_ERROR_RUN_ACTIVE },
        { EALREADY, SKILLD_ERROR_RUN_FINISHED },
        { ENODATA, SKILLD_ERROR_NO_RESULT },
        { ENOTRECOVERABLE, SKILLD_ERROR_POLICY_INVALID },
        { ENOSYS, SKILLD_ERROR_ISOLATION_UNAVAILABLE },
        { ENOMEDIUM, SKILLD_ERROR_ENVIRONMENT_MISSING },
};

START_TEST(test_errno_to_name) {
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;

                ck_assert_str_eq(bus_error_name_from_errno(-table[i].error), table[i].name);
                ck_assert_str_eq(bus_error_name_from_errno(table[i].error), table[i].name);
                ck_assert_int_eq(bus_error_set_errnof(&e, -table[i].error, "Run %s: %s.", "x", "no"),
                                 -table[i].error);
                ck_assert_str_eq(e.name, table[i].name);
                ck_assert_str_eq(e.message, "Run x: no.");
        }
        /* Generic errnos keep sd-bus's names and are never dressed up as ours. */
        ck_assert_ptr_null(bus_error_name_from_errno(-ENOENT));
        ck_assert_ptr_null(bus_error_name_from_errno(-EPERM));
        ck_assert_ptr_null(bus_error_name_from_errno(-EIO));
}
END_TEST

START_TEST(test_generic_errno) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL, f = SD_BUS_ERROR_NULL;

        ck_assert_int_eq(bus_error_set_errnof(&e, -EACCES, "Not for you."), -EACCES);
        ck_assert_str_eq(e.name, SD_BUS_ERROR_ACCESS_DENIED);
        ck_assert_str_eq(e.message, "Not for you.");
        ck_assert_int_eq(bus_error_set_errnof(&f, EINVAL, NULL), -EINVAL);
        ck_assert_str_eq(f.name, SD_BUS_ERROR_INVALID_ARGS);
}
END_TEST

/* An inspection's refusal: only the skill's own faults are InvalidSkill. */
START_TEST(test_inspection) {
        _cleanup_(sd_bus_error_free) sd_bus_error bad = SD_BUS_ERROR_NULL, full = SD_BUS_ERROR_NULL,
                                                  died = SD_BUS_ERROR_NULL;

        /* As the service does at start: the names' errnos are what the calls return. */
        ck_assert_int_eq(bus_errors_register(), 0);
        ck_assert_int_eq(bus_error_set_inspection(&bad, EBADMSG, "SKILL.md: no name"), -EBADMSG);
        ck_assert_str_eq(bad.name, SKILLD_ERROR_INVALID_SKILL);
        ck_assert_str_eq(bad.message, "SKILL.md: no name");
        ck_assert_int_eq(bus_error_set_inspection(&full, EDQUOT, "Disk quota exceeded"), -ENOSPC);
        ck_assert_str_eq(full.name, SKILLD_ERROR_NO_SPACE);
        ck_assert_int_eq(bus_error_set_inspection(&died, EIO, "Inspecting the skill failed"), -EIO);
        ck_assert_str_eq(died.name, SD_BUS_ERROR_IO_ERROR);
        ck_assert_str_eq(died.message, "Inspecting the skill failed");
}
END_TEST

/* The client side: names back to errnos, after registration. */
START_TEST(test_name_to_errno) {
        ck_assert_int_eq(bus_errors_register(), 0);
        ck_assert_int_eq(bus_errors_register(), 0);

        for (const sd_bus_error_map *m = skilld_bus_error_map; m->name; m++) {
                _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;

                ck_assert_int_eq(sd_bus_error_set(&e, m->name, "message"), -m->code);
                ck_assert_int_eq(sd_bus_error_get_errno(&e), m->code);
        }
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
                int expected = table[i].error == EDQUOT ? EUSERS : table[i].error;

                (void) bus_error_set_errnof(&e, -table[i].error, "m");
                ck_assert_int_eq(sd_bus_error_get_errno(&e), expected);
        }
}
END_TEST

START_TEST(test_names_documented) {
        _cleanup_free_ char *path = test_source_path("dbus/io.skilld.Skilld1.xml"), *xml = NULL;
        size_t n = 0;

        ck_assert_int_eq(read_full_file_at(AT_FDCWD, path, 1 << 20, true, &xml, NULL), 0);
        for (const sd_bus_error_map *m = skilld_bus_error_map; m->name; m++, n++) {
                ck_assert(startswith(m->name, SKILLD_ERROR_PREFIX));
                ck_assert_msg(strstr(xml, m->name), "%s is not documented in the XML", m->name);
        }
        ck_assert_uint_eq(n, 16);
}
END_TEST

static Suite *bus_errors_suite(void) {
        Suite *s = suite_create("bus-errors");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_errno_to_name);
        tcase_add_test(tc, test_generic_errno);
        tcase_add_test(tc, test_inspection);
        tcase_add_test(tc, test_name_to_errno);
        tcase_add_test(tc, test_names_documented);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return test_run_suite(bus_errors_suite());
}
