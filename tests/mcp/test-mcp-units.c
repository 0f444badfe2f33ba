/* Tests for the pure parts of skillctl mcp: the JSON-RPC line reader and decoder, the exact JSON
 * text of values (skillctl/mcp/jsonrpc.c), and resource URIs and base64 (skillctl/mcp/encode.c).
 * The server as a whole is tested on its stdio (test-mcp-protocol.py) and against real clients. */
#include <cjson/cJSON.h>

#include "jsonrpc.h"
#include "mcp-encode.h"
#include "test-util.h"

typedef struct Collected {
        char *lines[8];
        size_t n, too_long;
} Collected;

static int collect(const char *line, size_t size, bool too_long, void *userdata) {
        Collected *c = userdata;

        if (too_long)
                c->too_long++;
        else {
                ck_assert_uint_lt(c->n, ELEMENTSOF(c->lines));
                c->lines[c->n++] = strndup(line, size);
        }
        return 0;
}

static void collected_done(Collected *c) {
        for (size_t i = 0; i < c->n; i++)
                free(c->lines[i]);
}

START_TEST(test_line_reader) {
        _cleanup_(line_reader_done) LineReader r = { .max = 16 };
        _cleanup_(collected_done) Collected c = {};
        const char *stream = "{\"a\":1}\r\n\n{\"b\"\n:2}\nthis line is far too long for 16\nlast";

        /* Byte by byte: lines come out whole whatever the pieces. */
        for (const char *p = stream; *p; p++)
                ck_assert_int_eq(line_reader_feed(&r, p, 1, collect, &c), 0);
        ck_assert_int_eq(line_reader_finish(&r, collect, &c), 0);
        ck_assert_uint_eq(c.n, 4);
        ck_assert_str_eq(c.lines[0], "{\"a\":1}");      /* CRLF as good as LF */
        ck_assert_str_eq(c.lines[1], "{\"b\"");         /* the empty line is skipped */
        ck_assert_str_eq(c.lines[2], ":2}");
        ck_assert_str_eq(c.lines[3], "last");           /* no newline at the end */
        ck_assert_uint_eq(c.too_long, 1);               /* said once, not per byte */
}
END_TEST

static void decode_ok(const char *text, JsonRpcKind kind, const char *id, JsonRpcMessage *ret) {
        _cleanup_(jsonrpc_error_done) JsonRpcError e = {};

        ck_assert_msg(jsonrpc_decode(text, strlen(text), ret, &e) == 0, "%s: %s", text, e.message);
        ck_assert_int_eq(ret->kind, kind);
        ck_assert_str_eq(ret->id ?: "(none)", id ?: "(none)");
}

static void decode_fails(const char *text, size_t size, int code, const char *id) {
        _cleanup_(jsonrpc_message_done) JsonRpcMessage m = {};
        _cleanup_(jsonrpc_error_done) JsonRpcError e = {};

        ck_assert_int_eq(jsonrpc_decode(text, size, &m, &e), -EBADMSG);
        ck_assert_msg(e.code == code, "%s: code %d, not %d", text, e.code, code);
        ck_assert_ptr_nonnull(e.message);
        ck_assert_str_eq(e.id ?: "(none)", id ?: "(none)");
        ck_assert_ptr_null(m.root);
}

START_TEST(test_decode) {
        _cleanup_(jsonrpc_message_done) JsonRpcMessage req = {}, note = {}, resp = {};
        const char *deep_text;
        char *deep;

        decode_ok("{\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"method\":\"ping\"}", JSONRPC_REQUEST,
                  "9007199254740993", &req);
        ck_assert_str_eq(req.method, "ping");
        ck_assert_ptr_null(req.params);
        decode_ok("{\"method\":\"notifications/initialized\",\"jsonrpc\":\"2.0\",\"params\":{}}",
                  JSONRPC_NOTIFICATION, NULL, &note);
        ck_assert_ptr_nonnull(note.params);
        decode_ok("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{}}", JSONRPC_RESPONSE, "\"x\"", &resp);

#define FAILS(text, code, id) decode_fails(text, strlen(text), code, id)
        FAILS("{", JSONRPC_PARSE_ERROR, NULL);
        FAILS("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} x", JSONRPC_PARSE_ERROR, NULL);
        FAILS("[]", JSONRPC_INVALID_REQUEST, NULL);
        FAILS("7", JSONRPC_INVALID_REQUEST, NULL);
        FAILS("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", JSONRPC_INVALID_REQUEST, NULL);
        FAILS("{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", JSONRPC_INVALID_REQUEST, NULL);
        FAILS("{\"id\":2,\"method\":\"ping\"}", JSONRPC_INVALID_REQUEST, "2");
        FAILS("{\"jsonrpc\":\"2.0\",\"id\":3}", JSONRPC_INVALID_REQUEST, "3");
        FAILS("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"\"}", JSONRPC_INVALID_REQUEST, "4");
        FAILS("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"x\",\"params\":[1]}", JSONRPC_INVALID_PARAMS, "5");
        FAILS("{\"jsonrpc\":\"2.0\",\"id\":\"a\tb\",\"method\":\"x\"}", JSONRPC_PARSE_ERROR, NULL);
        FAILS("{\"jsonrpc\":\"2.0\",\x1f\"id\":6,\"method\":\"x\"}", JSONRPC_PARSE_ERROR, NULL);
        FAILS("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"\xc3\"}", JSONRPC_PARSE_ERROR, NULL);
        {
                static const char nul[] = "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"x\"}\0";

                decode_fails(nul, sizeof(nul) - 1, JSONRPC_PARSE_ERROR, NULL);
        }
#undef FAILS

        /* One level too deep, refused before cJSON recurses. */
        deep = malloc(2 * (JSONRPC_DEPTH_MAX + 1) + 1);
        ck_assert_ptr_nonnull(deep);
        memset(deep, '[', JSONRPC_DEPTH_MAX + 1);
        memset(deep + JSONRPC_DEPTH_MAX + 1, ']', JSONRPC_DEPTH_MAX + 1);
        deep[2 * (JSONRPC_DEPTH_MAX + 1)] = '\0';
        deep_text = deep;
        decode_fails(deep_text, strlen(deep_text), JSONRPC_INVALID_REQUEST, NULL);
        free(deep);
}
END_TEST

START_TEST(test_find_raw) {
        const char *text = "{\"params\": {\"a\": [1, {\"input\": 0}], \"arguments\" : {\"in\\u0070ut\": "
                           "{\"n\": 12345678901234567890, \"f\": 1.0}, \"input\": 2}}}";
        const char *raw;
        size_t n;

        raw = json_find_raw(text, "params\narguments\ninput", &n);
        ck_assert_ptr_nonnull(raw);
        /* The first of the name, escaped or not, as cJSON takes it; the text as written. */
        ck_assert_int_eq((int) n, (int) strlen("{\"n\": 12345678901234567890, \"f\": 1.0}"));
        ck_assert_int_eq(strncmp(raw, "{\"n\": 12345678901234567890, \"f\": 1.0}", n), 0);
        ck_assert_ptr_null(json_find_raw(text, "params\nnone", &n));
        ck_assert_ptr_null(json_find_raw(text, "params\na\ninput", &n));     /* not through arrays */
}
END_TEST

START_TEST(test_format) {
        _cleanup_free_ char *line = jsonrpc_format_result("12345678901234567890", cJSON_CreateObject());
        _cleanup_free_ char *err = jsonrpc_format_error(NULL, -32700, "Parse \"error\"");

        ck_assert_str_eq(line, "{\"jsonrpc\":\"2.0\",\"id\":12345678901234567890,\"result\":{}}\n");
        ck_assert_str_eq(err, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
                              "\"message\":\"Parse \\\"error\\\"\"}}\n");
}
END_TEST

START_TEST(test_base64) {
        static const char *const plain[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
        static const char *const bad[] = { "Zg", "Zg=", "Z===", "Zm9v!A==", "Zm=v", "Zm9v\n" };

        for (size_t i = 0; i < ELEMENTSOF(plain); i++) {
                _cleanup_free_ char *enc = mcp_base64_encode(plain[i], strlen(plain[i])), *dec = NULL;
                size_t n;

                ck_assert_int_eq(mcp_base64_decode(enc, &dec, &n), 0);
                ck_assert_uint_eq(n, strlen(plain[i]));
                ck_assert_int_eq(memcmp(dec, plain[i], n), 0);
        }
        {
                _cleanup_free_ char *enc = mcp_base64_encode("foobar", 6);

                ck_assert_str_eq(enc, "Zm9vYmFy");
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char *dec = NULL;
                size_t n;

                ck_assert_msg(mcp_base64_decode(bad[i], &dec, &n) == -EINVAL, "%s accepted", bad[i]);
                ck_assert_ptr_null(dec);
        }
}
END_TEST

START_TEST(test_uri) {
        _cleanup_free_ char *uri = mcp_skill_uri("pdf", "a b/ü?#%.md"), *auth = NULL, *path = NULL;
        char *a = NULL, *p = NULL;

        ck_assert_str_eq(uri, "skill://pdf/a%20b/%C3%BC%3F%23%25.md");
        ck_assert_int_eq(mcp_uri_split(uri, "skill", &auth, &path), 0);
        ck_assert_str_eq(auth, "pdf");
        ck_assert_str_eq(path, "a b/ü?#%.md");

        ck_assert_int_eq(mcp_uri_split("skilld-run://x/y", "skill", &a, &p), -EINVAL);
        ck_assert_int_eq(mcp_uri_split("skill://pdf", "skill", &a, &p), -EINVAL);
        ck_assert_int_eq(mcp_uri_split("skill:///SKILL.md", "skill", &a, &p), -EINVAL);
        ck_assert_int_eq(mcp_uri_split("skill://pdf/a%00b", "skill", &a, &p), -EINVAL);
        ck_assert_int_eq(mcp_uri_split("skill://pdf/a%zz", "skill", &a, &p), -EINVAL);
        ck_assert_int_eq(mcp_uri_split("skill://pdf/a?b=1", "skill", &a, &p), -EINVAL);
        ck_assert_ptr_null(a);
        ck_assert_ptr_null(p);

        ck_assert_str_eq(mcp_mime_type("x/SKILL.md"), "text/markdown");
        ck_assert_str_eq(mcp_mime_type("noext"), "application/octet-stream");
        ck_assert(mcp_is_text("héllo", strlen("héllo")));
        ck_assert(!mcp_is_text("a\0b", 3));
        ck_assert(!mcp_is_text("\xff", 1));
}
END_TEST

static Suite *mcp_suite(void) {
        Suite *s = suite_create("mcp");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_line_reader);
        tcase_add_test(tc, test_decode);
        tcase_add_test(tc, test_find_raw);
        tcase_add_test(tc, test_format);
        tcase_add_test(tc, test_base64);
        tcase_add_test(tc, test_uri);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return test_run_suite(mcp_suite());
}
