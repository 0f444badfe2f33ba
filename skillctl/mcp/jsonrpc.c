/* JSON-RPC 2.0 framing and decoding for the MCP server (see jsonrpc.h). */
#include "jsonrpc.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

void jsonrpc_message_done(JsonRpcMessage *m) {
        cJSON_Delete(m->root);
        free(m->id);
        free(m->text);
        *m = (JsonRpcMessage) {};
}

void jsonrpc_error_done(JsonRpcError *e) {
        free(e->message);
        free(e->id);
        *e = (JsonRpcError) {};
}

static const char *skip_ws(const char *p, const char *end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
                p++;
        return p;
}

/* p is at an opening quote; returns the position after the closing one (or end). */
static const char *skip_string(const char *p, const char *end) {
        for (p++; p < end; p++) {
                if (*p == '\\')
                        p++;
                else if (*p == '"')
                        return p + 1;
        }
        return end;
}

/* Skips one value of valid JSON; linear, no recursion. */
static const char *skip_value(const char *p, const char *end) {
        unsigned depth = 0;

        while (p < end) {
                switch (*p) {
                case '"':
                        p = skip_string(p, end);
                        if (depth == 0)
                                return p;
                        continue;
                case '{':
                case '[':
                        depth++;
                        break;
                case '}':
                case ']':
                        if (depth == 0)
                                return p;
                        if (--depth == 0)
                                return p + 1;
                        break;
                case ',':
                        if (depth == 0)
                                return p;
                        break;
                case ' ':
                case '\t':
                case '\n':
                case '\r':
                        if (depth == 0)
                                return p;
                        break;
                }
                p++;
        }
        return end;
}

/* Whether the JSON string at [s, e) (quotes included) decodes to key. */
static bool string_equals(const char *s, const char *e, const char *key) {
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;
        size_t n = strlen(key);

        if (!memchr(s, '\\', e - s))
                return (size_t) (e - s) == n + 2 && memcmp(s + 1, key, n) == 0;
        /* Escaped: let cJSON decode it, as it decoded the object. */
        j = cJSON_ParseWithLength(s, e - s);
        return j && cJSON_IsString(j) && streq(j->valuestring, key);
}

static const char *find_key(const char *p, const char *end, const char *key, size_t *ret_size) {
        p = skip_ws(p, end);
        if (p >= end || *p != '{')
                return NULL;
        for (p++;;) {
                const char *k, *ke, *v, *ve;

                p = skip_ws(p, end);
                if (p >= end || *p != '"')
                        return NULL;
                k = p;
                ke = skip_string(p, end);
                p = skip_ws(ke, end);
                if (p >= end || *p != ':')
                        return NULL;
                v = skip_ws(p + 1, end);
                ve = skip_value(v, end);
                if (string_equals(k, ke, key)) {
                        *ret_size = ve - v;
                        return v;
                }
                p = skip_ws(ve, end);
                if (p >= end || *p != ',')
                        return NULL;
                p++;
        }
}

const char *json_find_raw(const char *text, const char *path, size_t *ret_size) {
        const char *p = text, *end = text + strlen(text);
        size_t size = 0;

        for (const char *seg = path; seg; ) {
                const char *nl = strchr(seg, '\n');
                _cleanup_free_ char *key = nl ? strndup(seg, nl - seg) : strdup(seg);

                if (!key)
                        return NULL;
                p = find_key(p, end, key, &size);
                if (!p)
                        return NULL;
                end = p + size;
                seg = nl ? nl + 1 : NULL;
        }
        *ret_size = size;
        return p;
}

bool json_depth_ok(const char *text, size_t size, unsigned max) {
        const char *p = text, *end = text + size;
        unsigned depth = 0;

        while (p < end) {
                if (*p == '"') {
                        p = skip_string(p, end);
                        continue;
                }
                if (*p == '{' || *p == '[') {
                        if (++depth > max)
                                return false;
                } else if ((*p == '}' || *p == ']') && depth > 0)
                        depth--;
                p++;
        }
        return true;
}

int jsonrpc_error_setv(JsonRpcError *e, int code, const char *id, const char *fmt, va_list ap) {
        *e = (JsonRpcError) { .code = code };
        if (vasprintf(&e->message, fmt, ap) < 0)
                e->message = NULL;
        if (id)
                e->id = strdup(id);
        return -EBADMSG;
}

_printf_(4, 5)
static int fail(JsonRpcError *e, int code, const char *id, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = jsonrpc_error_setv(e, code, id, fmt, ap);
        va_end(ap);
        return r;
}

static char *value_text(const char *text, const char *key, const cJSON *item) {
        size_t n;
        const char *raw = json_find_raw(text, key, &n);

        return raw ? strndup(raw, n) : cJSON_PrintUnformatted(item);
}

int jsonrpc_decode(const char *line, size_t size, JsonRpcMessage *ret, JsonRpcError *ret_error) {
        _cleanup_(jsonrpc_message_done) JsonRpcMessage m = {};
        const cJSON *id, *version, *method, *params;

        if (memchr(line, '\0', size))
                return fail(ret_error, JSONRPC_PARSE_ERROR, NULL, "Parse error: the message holds a NUL byte");
        if (!utf8_is_valid(line, size))
                return fail(ret_error, JSONRPC_PARSE_ERROR, NULL, "Parse error: the message is not valid UTF-8");
        /* Before cJSON, which recurses once per level. */
        if (!json_depth_ok(line, size, JSONRPC_DEPTH_MAX))
                return fail(ret_error, JSONRPC_INVALID_REQUEST, NULL,
                            "Invalid Request: the message nests deeper than %u levels", JSONRPC_DEPTH_MAX);

        m.text = strndup(line, size);
        if (!m.text)
                return -ENOMEM;
        m.root = cJSON_ParseWithOpts(m.text, NULL, true);
        if (!m.root)
                return fail(ret_error, JSONRPC_PARSE_ERROR, NULL, "Parse error: the message is not valid JSON");
        if (cJSON_IsArray(m.root))
                return fail(ret_error, JSONRPC_INVALID_REQUEST, NULL,
                            "Invalid Request: batches are not supported (MCP 2025-11-25): send one message per line");
        if (!cJSON_IsObject(m.root))
                return fail(ret_error, JSONRPC_INVALID_REQUEST, NULL,
                            "Invalid Request: a message must be a JSON object");

        id = cJSON_GetObjectItemCaseSensitive(m.root, "id");
        if (id) {
                if (!cJSON_IsString(id) && !cJSON_IsNumber(id))
                        return fail(ret_error, JSONRPC_INVALID_REQUEST, NULL,
                                    "Invalid Request: \"id\" must be a string or an integer");
                m.id = value_text(m.text, "id", id);
                if (!m.id)
                        return -ENOMEM;
        }

        version = cJSON_GetObjectItemCaseSensitive(m.root, "jsonrpc");
        if (!cJSON_IsString(version) || !streq(version->valuestring, "2.0"))
                return fail(ret_error, JSONRPC_INVALID_REQUEST, m.id,
                            "Invalid Request: \"jsonrpc\" must be \"2.0\"");

        method = cJSON_GetObjectItemCaseSensitive(m.root, "method");
        if (!method) {
                if (id && (cJSON_HasObjectItem(m.root, "result") || cJSON_HasObjectItem(m.root, "error"))) {
                        m.kind = JSONRPC_RESPONSE;
                        *ret = m;
                        m = (JsonRpcMessage) {};
                        return 0;
                }
                return fail(ret_error, JSONRPC_INVALID_REQUEST, m.id, "Invalid Request: no \"method\"");
        }
        if (!cJSON_IsString(method) || isempty(method->valuestring))
                return fail(ret_error, JSONRPC_INVALID_REQUEST, m.id,
                            "Invalid Request: \"method\" must be a non-empty string");
        m.method = method->valuestring;
        m.kind = id ? JSONRPC_REQUEST : JSONRPC_NOTIFICATION;

        params = cJSON_GetObjectItemCaseSensitive(m.root, "params");
        if (params && !cJSON_IsObject(params))
                return fail(ret_error, JSONRPC_INVALID_PARAMS, m.id,
                            "Invalid params: \"params\" must be an object");
        m.params = params;

        *ret = m;
        m = (JsonRpcMessage) {};
        return 0;
}

static int line_reader_grow(LineReader *r, size_t need) {
        size_t a;
        char *p;

        if (need <= r->allocated)
                return 0;
        a = MAX(need, MAX(r->allocated * 2, (size_t) 4096));
        p = realloc(r->buf, a);
        if (!p)
                return -ENOMEM;
        r->buf = p;
        r->allocated = a;
        return 0;
}

int line_reader_feed(LineReader *r, const char *data, size_t n, line_handler_t handler, void *userdata) {
        size_t max = r->max ?: JSONRPC_LINE_MAX;
        int q;

        while (n > 0) {
                const char *nl = memchr(data, '\n', n);
                size_t chunk = nl ? (size_t) (nl - data) : n;

                if (!r->skipping) {
                        if (r->size + chunk > max) {
                                /* Said once, when the line passes the cap; the rest is dropped unread. */
                                r->skipping = true;
                                r->size = 0;
                                q = handler("", 0, true, userdata);
                                if (q < 0)
                                        return q;
                        } else {
                                q = line_reader_grow(r, r->size + chunk + 1);
                                if (q < 0)
                                        return q;
                                memcpy(r->buf + r->size, data, chunk);
                                r->size += chunk;
                        }
                }
                if (!nl)
                        break;
                if (!r->skipping) {
                        size_t size = r->size;

                        /* "\r\n" is as good a line end. */
                        if (size > 0 && r->buf[size - 1] == '\r')
                                size--;
                        r->buf[size] = '\0';
                        r->size = 0;
                        if (size > 0) {
                                q = handler(r->buf, size, false, userdata);
                                if (q < 0)
                                        return q;
                        }
                }
                r->skipping = false;
                data = nl + 1;
                n -= chunk + 1;
        }
        return 0;
}

int line_reader_finish(LineReader *r, line_handler_t handler, void *userdata) {
        if (r->skipping || r->size == 0)
                return 0;
        return line_reader_feed(r, "\n", 1, handler, userdata);
}

void line_reader_done(LineReader *r) {
        free(r->buf);
        *r = (LineReader) {};
}

static char *format_line(cJSON *o) {
        _cleanup_free_ char *s = NULL;
        char *line;

        if (!o)
                return NULL;
        s = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        if (!s)
                return NULL;
        line = strdup_printf("%s\n", s);
        return line;
}

static cJSON *envelope(const char *id) {
        cJSON *o = cJSON_CreateObject();

        if (!o || !cJSON_AddStringToObject(o, "jsonrpc", "2.0") ||
            !cJSON_AddItemToObject(o, "id", id ? cJSON_CreateRaw(id) : cJSON_CreateNull()))
                return cJSON_Delete(o), NULL;
        return o;
}

char *jsonrpc_format_result(const char *id, cJSON *result) {
        cJSON *o = envelope(id);

        if (!o || !result || !cJSON_AddItemToObject(o, "result", result)) {
                cJSON_Delete(result);
                return cJSON_Delete(o), NULL;
        }
        return format_line(o);
}

char *jsonrpc_format_error(const char *id, int code, const char *message) {
        cJSON *o = envelope(id), *e;

        if (!o || !(e = cJSON_AddObjectToObject(o, "error")) || !cJSON_AddNumberToObject(e, "code", code) ||
            !cJSON_AddStringToObject(e, "message", message))
                return cJSON_Delete(o), NULL;
        return format_line(o);
}

char *jsonrpc_format_notification(const char *method, cJSON *params) {
        cJSON *o = cJSON_CreateObject();

        if (!o || !params || !cJSON_AddItemToObject(o, "params", params)) {
                cJSON_Delete(params);
                return cJSON_Delete(o), NULL;
        }
        if (!cJSON_AddStringToObject(o, "jsonrpc", "2.0") || !cJSON_AddStringToObject(o, "method", method))
                return cJSON_Delete(o), NULL;
        return format_line(o);
}
