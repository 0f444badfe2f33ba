/* Tests for skilld/json: a skill's JSON printed back by cJSON keeps every number token, and what
 * RFC 8259 forbids is refused with the place it was found. */
#include "json-exact.h"
#include "test-util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

/* Parses text strictly and returns cJSON's compact print of the tree. */
static char *roundtrip(const char *text) {
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;
        _cleanup_free_ char *error = NULL;

        ck_assert_msg(json_parse_exact(text, strlen(text), &j, &error) == 0, "%s: %s", text, error);
        return cJSON_PrintUnformatted(j);
}

static void assert_roundtrip(const char *text, const char *expected) {
        _cleanup_free_ char *s = roundtrip(text);

        ck_assert_str_eq(s, expected);
}

static void assert_refused(const char *text, size_t n, const char *message) {
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;
        _cleanup_free_ char *error = NULL;

        ck_assert_int_eq(json_parse_exact(text, n, &j, &error), -EINVAL);
        ck_assert_ptr_null(j);
        ck_assert_msg(error && strstr(error, message), "%s: got \"%s\", wanted \"%s\"", text,
                      strna(error), message);
}

START_TEST(test_numbers_as_written) {
        assert_roundtrip("{\"big\": 12345678901234567890, \"id\": 9007199254740993, \"f\": 1.0}",
                         "{\"big\":12345678901234567890,\"id\":9007199254740993,\"f\":1.0}");
        assert_roundtrip("[108.0, -0, 0.1, 1e400, -2.5E-3, 1E+2, 100000000000000000000000000000001]",
                         "[108.0,-0,0.1,1e400,-2.5E-3,1E+2,100000000000000000000000000000001]");
        assert_roundtrip(" 7 ", "7");
        assert_roundtrip("\n\t-12.50\r\n", "-12.50");
}
END_TEST

START_TEST(test_values) {
        assert_roundtrip("{\"a\":[true,false,null,{},[],\"\"],\"b\":{\"c\":\"d\"}}",
                         "{\"a\":[true,false,null,{},[],\"\"],\"b\":{\"c\":\"d\"}}");
        /* Escapes are decoded (cJSON prints them its way); pairs become one code point. */
        assert_roundtrip("\"\\u00e9\\n\\/\\ud83d\\ude00\\\"\"", "\"\xc3\xa9\\n/\xf0\x9f\x98\x80\\\"\"");
        assert_roundtrip("\"caf\xc3\xa9\"", "\"caf\xc3\xa9\"");
        /* What a C string cannot hold stays the token it was. */
        assert_roundtrip("[\"a\\u0000b\", \"\\ud800\", \"\\udc00x\"]", "[\"a\\u0000b\",\"\\ud800\",\"\\udc00x\"]");
        /* Duplicate keys are valid JSON: both stay, in order. */
        assert_roundtrip("{\"k\":1,\"k\":2}", "{\"k\":1,\"k\":2}");
}
END_TEST

START_TEST(test_refused) {
        assert_refused("", 0, "line 1, column 1: unexpected end of the text");
        assert_refused("   ", 3, "unexpected end");
        assert_refused("01", 2, "leading zeros");
        assert_refused("-", 1, "a number needs digits");
        assert_refused("+1", 2, "unexpected character '+'");
        assert_refused("1.", 2, "a decimal point needs digits");
        assert_refused(".5", 2, "unexpected character '.'");
        assert_refused("1e", 2, "an exponent needs digits");
        assert_refused("0x10", 4, "unexpected text after");
        assert_refused("NaN", 3, "unexpected character 'N'");
        assert_refused("tru", 3, "unexpected character 't'");
        assert_refused("[1,]", 4, "unexpected character ']'");
        assert_refused("[1 2]", 5, "expected ',' or ']'");
        assert_refused("{\"a\" 1}", 7, "expected ':'");
        assert_refused("{a:1}", 5, "expected a string as the key");
        assert_refused("{\"a\":1,}", 8, "expected a string as the key");
        assert_refused("{\"a\\u0000\":1}", 13, "object keys holding");
        assert_refused("\"abc", 4, "no closing quote");
        assert_refused("\"a\tb\"", 5, "control characters");
        assert_refused("\"\\x\"", 4, "unknown escape");
        assert_refused("\"\\u12g4\"", 8, "four hexadecimal digits");
        assert_refused("\"\xff\"", 3, "not valid UTF-8");
        assert_refused("\"\xc0\xaf\"", 4, "not valid UTF-8");      /* overlong */
        assert_refused("\"\xed\xa0\x80\"", 5, "not valid UTF-8");  /* a surrogate in UTF-8 */
        assert_refused("\xef\xbb\xbf{}", 5, "byte order mark");
        assert_refused("{} x", 4, "line 1, column 4: unexpected text after the JSON value");
        assert_refused("{\n  \"a\": 01\n}", 13, "line 2, column 8: leading zeros");
        assert_refused("[1]\0", 4, "unexpected text after");
        assert_refused("{\"a\":1}{}", 9, "unexpected text after");
}
END_TEST

START_TEST(test_depth) {
        _cleanup_free_ char *ok = malloc(2 * JSON_EXACT_DEPTH_MAX + 1), *deep = NULL;
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;
        size_t n = JSON_EXACT_DEPTH_MAX;

        ck_assert_ptr_nonnull(ok);
        memset(ok, '[', n);
        memset(ok + n, ']', n);
        ck_assert_int_eq(json_parse_exact(ok, 2 * n, &j, NULL), 0);

        deep = malloc(2 * n + 2);
        ck_assert_ptr_nonnull(deep);
        memset(deep, '[', n + 1);
        memset(deep + n + 1, ']', n + 1);
        assert_refused(deep, 2 * n + 2, "nest deeper than 1000 levels");
}
END_TEST

START_TEST(test_keeping_exact) {
        const char *text = "{\"exit_code\": 3, \"started_at_usec\": 1700000000000001, "
                           "\"output\": {\"big\": 12345678901234567890, \"f\": 1.0}}";
        _cleanup_(cJSON_Deletep) cJSON *j = json_parse_keeping_exact(text, "output"), *old = NULL;
        _cleanup_free_ char *out = NULL;

        ck_assert_ptr_nonnull(j);
        /* Our own fields read as numbers... */
        ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(j, "exit_code")));
        ck_assert_int_eq(cJSON_GetObjectItem(j, "exit_code")->valueint, 3);
        ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(j, "started_at_usec")));
        /* ...the skill's as it wrote them. */
        out = cJSON_PrintUnformatted(cJSON_GetObjectItem(j, "output"));
        ck_assert_str_eq(out, "{\"big\":12345678901234567890,\"f\":1.0}");

        /* What only cJSON accepts (a record from an older version) still reads. */
        old = json_parse_keeping_exact("{\"output\": [01], \"e\": \"\xff\"}", "output");
        ck_assert_ptr_nonnull(old);
        ck_assert_ptr_null(json_parse_keeping_exact("{\"output\": ", "output"));
}
END_TEST

/* Our own whole numbers with every digit: a timestamp ending in 0 is not printed in exponent form
 * (cJSON's double did: 1.79574581105335e+15), and cJSON reads each back to the same value. */
START_TEST(test_uint64_printed_whole) {
        _cleanup_(cJSON_Deletep) cJSON *o = cJSON_CreateObject(), *back = NULL;
        _cleanup_free_ char *text = NULL;

        ck_assert_ptr_nonnull(o);
        ck_assert_ptr_nonnull(json_add_uint64(o, "t", UINT64_C(1795745811053350)));
        ck_assert_ptr_nonnull(json_add_uint64(o, "zero", 0));
        ck_assert_ptr_nonnull(json_add_uint64(o, "max", UINT64_MAX));
        text = cJSON_PrintUnformatted(o);
        ck_assert_str_eq(text, "{\"t\":1795745811053350,\"zero\":0,\"max\":18446744073709551615}");
        back = cJSON_Parse(text);
        ck_assert_ptr_nonnull(back);
        ck_assert(cJSON_GetObjectItem(back, "t")->valuedouble == 1795745811053350.0);
        ck_assert(cJSON_GetObjectItem(back, "zero")->valuedouble == 0.0);
}
END_TEST

static Suite *json_suite(void) {
        Suite *s = suite_create("json");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_numbers_as_written);
        tcase_add_test(tc, test_values);
        tcase_add_test(tc, test_refused);
        tcase_add_test(tc, test_depth);
        tcase_add_test(tc, test_keeping_exact);
        tcase_add_test(tc, test_uint64_printed_whole);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return test_run_suite(json_suite());
}
