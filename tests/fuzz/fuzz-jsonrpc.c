/* Fuzz target "jsonrpc": the MCP server's JSON-RPC framing and decoder (skillctl/mcp/jsonrpc.c),
 * everything a client writes on the server's stdin before any method runs. The input is a byte
 * stream: it is split into lines by the line reader (fed in pieces whose sizes the input's first
 * byte picks, under a 256-byte cap so that over-long lines are common), and every line is
 * decoded.
 *
 * Promises checked: the reader hands out exactly the lines a newline ends (and the last one), none
 * longer than its cap, and says once for each line that passed it; jsonrpc_decode() returns 0 or
 * -EBADMSG (-ENOMEM aside). A decoded message is a request (method and id), a notification
 * (method, no id) or a response (id, result or error); its id is the JSON text of a string or
 * number, found again by json_find_raw(); params is absent or an object. A refusal carries a
 * JSON-RPC error code and a message, and its id (if any) is JSON. Every answer formatted from
 * either parses back as one line of JSON holding that id. Raw values json_find_raw() returns
 * parse as JSON. No fd leaks. */
#include <stdio.h>

#include "fuzz.h"
#include "jsonrpc.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

#define FUZZ_LINE_MAX 256U

typedef struct Lines {
        size_t n, too_long;
} Lines;

static void check_line_format(char *line, const char *id) {
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;
        size_t n;

        fuzz_assert(line);
        n = strlen(line);
        fuzz_assert(n > 0 && line[n - 1] == '\n' && !memchr(line, '\n', n - 1), "not one line: %s", line);
        j = cJSON_ParseWithLength(line, n);
        fuzz_assert(cJSON_IsObject(j), "answer is not JSON: %s", line);
        if (id) {
                _cleanup_(cJSON_Deletep) cJSON *want = cJSON_Parse(id);

                fuzz_assert(want && cJSON_Compare(want, cJSON_GetObjectItem(j, "id"), true), "id %s lost", id);
        } else
                fuzz_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "id")));
        free(line);
}

static void check_raw(const char *text, const char *path) {
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;
        const char *raw;
        size_t n;

        raw = json_find_raw(text, path, &n);
        if (!raw)
                return;
        fuzz_assert(raw >= text && raw + n <= text + strlen(text));
        j = cJSON_ParseWithLength(raw, n);
        fuzz_assert(j, "raw value of %s is not JSON: %.*s", path, (int) n, raw);
}

static int on_line(const char *line, size_t size, bool too_long, void *userdata) {
        _cleanup_(jsonrpc_message_done) JsonRpcMessage m = {};
        _cleanup_(jsonrpc_error_done) JsonRpcError e = {};
        Lines *l = userdata;
        int r;

        l->n++;
        if (too_long) {
                fuzz_assert(size == 0);
                l->too_long++;
                return 0;
        }
        fuzz_assert(size > 0 && size <= FUZZ_LINE_MAX && !memchr(line, '\n', size), "line of %zu", size);

        r = jsonrpc_decode(line, size, &m, &e);
        if (r == -ENOMEM)
                return 0;
        if (r < 0) {
                fuzz_assert(r == -EBADMSG, "undocumented %d", r);
                fuzz_assert(!m.root && !m.id);
                fuzz_assert(e.code == JSONRPC_PARSE_ERROR || e.code == JSONRPC_INVALID_REQUEST ||
                            e.code == JSONRPC_INVALID_PARAMS, "code %d", e.code);
                fuzz_assert(e.message && fuzz_text_is_safe(e.message));
                check_line_format(jsonrpc_format_error(e.id, e.code, e.message), e.id);
                return 0;
        }

        fuzz_assert(cJSON_IsObject(m.root) && m.text);
        switch (m.kind) {
        case JSONRPC_REQUEST:
        case JSONRPC_NOTIFICATION:
                fuzz_assert(m.method && *m.method);
                fuzz_assert((m.kind == JSONRPC_REQUEST) == (m.id != NULL));
                break;
        case JSONRPC_RESPONSE:
                fuzz_assert(m.id && !m.method);
                break;
        default:
                fuzz_assert(false, "kind %d", m.kind);
        }
        fuzz_assert(!m.params || cJSON_IsObject(m.params));
        if (m.id) {
                _cleanup_(cJSON_Deletep) cJSON *id = cJSON_Parse(m.id);

                fuzz_assert(cJSON_IsString(id) || cJSON_IsNumber(id), "id %s", m.id);
                check_line_format(jsonrpc_format_result(m.id, cJSON_CreateObject()), m.id);
        }
        check_raw(m.text, "id");
        check_raw(m.text, "params\narguments\ninput");
        check_raw(m.text, "params\n_meta\nprogressToken");
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(line_reader_done) LineReader reader = { .max = FUZZ_LINE_MAX };
        int fd_before = fuzz_lowest_free_fd();
        size_t piece, newlines = 0;
        Lines l = {};

        if (size == 0)
                return 0;
        piece = 1 + data[0] % 64;
        data++, size--;
        for (size_t i = 0; i < size; i++)
                newlines += data[i] == '\n';

        for (size_t off = 0; off < size; off += piece)
                fuzz_assert(line_reader_feed(&reader, (const char *) data + off, MIN(piece, size - off), on_line,
                                             &l) >= 0);
        fuzz_assert(line_reader_finish(&reader, on_line, &l) >= 0);
        /* Empty lines are skipped, so at most one line per newline, plus an unterminated last. */
        fuzz_assert(l.n <= newlines + 1, "%zu lines from %zu newlines", l.n, newlines);
        fuzz_assert(fuzz_lowest_free_fd() == fd_before, "an fd leaked");
        return 0;
}
