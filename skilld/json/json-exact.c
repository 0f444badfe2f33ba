/* See json-exact.h. A recursive descent over RFC 8259's grammar; the depth is bounded, so the
 * recursion is too. */
#include <inttypes.h>
#include <limits.h>

#include "error.h"
#include "json-exact.h"
#include "parse-util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

typedef struct JsonParser {
        const char *text, *p, *end;
        unsigned depth;
        const char *error;      /* what is wrong (static text) */
        const char *error_at;   /* and where */
} JsonParser;

static int fail(JsonParser *j, const char *at, const char *message) {
        j->error = message;
        j->error_at = at;
        return -EINVAL;
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

static bool at(const JsonParser *j, char c) {
        return j->p < j->end && *j->p == c;
}

static bool at_digit(const JsonParser *j) {
        return j->p < j->end && is_digit(*j->p);
}

static void skip_space(JsonParser *j) {
        while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
                j->p++;
}

static int parse_value(JsonParser *j, cJSON **ret);

int json_attach(cJSON *container, const char *key, cJSON *item) {
        if (!item)
                return -ENOMEM;
        if (!(key ? cJSON_AddItemToObject(container, key, item) : cJSON_AddItemToArray(container, item))) {
                cJSON_Delete(item);
                return -ENOMEM;
        }
        return 0;
}

static int parse_number(JsonParser *j, cJSON **ret) {
        const char *start = j->p;
        _cleanup_free_ char *token = NULL;

        if (at(j, '-'))
                j->p++;
        if (!at_digit(j))
                return fail(j, j->p, "a number needs digits");
        if (at(j, '0')) {
                j->p++;
                if (at_digit(j))
                        return fail(j, start, "leading zeros are not allowed in numbers");
        } else
                while (at_digit(j))
                        j->p++;
        if (at(j, '.')) {
                j->p++;
                if (!at_digit(j))
                        return fail(j, j->p, "a decimal point needs digits after it");
                while (at_digit(j))
                        j->p++;
        }
        if (at(j, 'e') || at(j, 'E')) {
                j->p++;
                if (at(j, '+') || at(j, '-'))
                        j->p++;
                if (!at_digit(j))
                        return fail(j, j->p, "an exponent needs digits");
                while (at_digit(j))
                        j->p++;
        }

        token = strndup(start, (size_t) (j->p - start));
        if (!token)
                return -ENOMEM;
        *ret = cJSON_CreateRaw(token);
        return *ret ? 0 : -ENOMEM;
}

static bool hex4(const char *p, const char *end, uint32_t *ret) {
        uint32_t v = 0;

        if (end - p < 4)
                return false;
        for (int i = 0; i < 4; i++) {
                char c = p[i];

                v <<= 4;
                if (is_digit(c))
                        v |= (uint32_t) (c - '0');
                else if (c >= 'a' && c <= 'f')
                        v |= (uint32_t) (c - 'a' + 10);
                else if (c >= 'A' && c <= 'F')
                        v |= (uint32_t) (c - 'A' + 10);
                else
                        return false;
        }
        *ret = v;
        return true;
}

static size_t utf8_put(char *out, uint32_t cp) {
        if (cp < 0x80) {
                out[0] = (char) cp;
                return 1;
        }
        if (cp < 0x800) {
                out[0] = (char) (0xc0 | (cp >> 6));
                out[1] = (char) (0x80 | (cp & 0x3f));
                return 2;
        }
        if (cp < 0x10000) {
                out[0] = (char) (0xe0 | (cp >> 12));
                out[1] = (char) (0x80 | ((cp >> 6) & 0x3f));
                out[2] = (char) (0x80 | (cp & 0x3f));
                return 3;
        }
        out[0] = (char) (0xf0 | (cp >> 18));
        out[1] = (char) (0x80 | ((cp >> 12) & 0x3f));
        out[2] = (char) (0x80 | ((cp >> 6) & 0x3f));
        out[3] = (char) (0x80 | (cp & 0x3f));
        return 4;
}

static size_t utf8_sequence_length(unsigned char c) {
        return c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
}

/* Decodes the string at j->p (its opening quote). *ret_representable is false when the string
 * holds \u0000 or an unpaired surrogate: valid JSON that a NUL-terminated UTF-8 string cannot
 * carry. */
static int parse_string(JsonParser *j, char **ret, bool *ret_representable) {
        const char *start = j->p, *q;
        _cleanup_free_ char *s = NULL;
        bool representable = true;
        size_t k = 0;

        /* Find the closing quote first: the decoded text is never longer than the token. */
        for (q = start + 1; q < j->end && *q != '"'; q++)
                if (*q == '\\' && q + 1 < j->end)
                        q++;
        if (q >= j->end)
                return fail(j, start, "the string has no closing quote");
        s = malloc((size_t) (q - start));
        if (!s)
                return -ENOMEM;

        for (j->p = start + 1; j->p < q;) {
                unsigned char c = (unsigned char) *j->p;
                uint32_t cp, low;
                size_t len;

                if (c < 0x20)
                        return fail(j, j->p, "control characters must be escaped in strings");
                if (c >= 0x80) {
                        len = utf8_sequence_length(c);
                        if (len == 0 || (size_t) (q - j->p) < len || !utf8_is_valid(j->p, len))
                                return fail(j, j->p, "the string is not valid UTF-8");
                        memcpy(s + k, j->p, len);
                        k += len;
                        j->p += len;
                        continue;
                }
                if (c != '\\') {
                        s[k++] = (char) c;
                        j->p++;
                        continue;
                }

                switch (j->p[1]) {
                case '"': case '\\': case '/':
                        s[k++] = j->p[1];
                        break;
                case 'b':
                        s[k++] = '\b';
                        break;
                case 'f':
                        s[k++] = '\f';
                        break;
                case 'n':
                        s[k++] = '\n';
                        break;
                case 'r':
                        s[k++] = '\r';
                        break;
                case 't':
                        s[k++] = '\t';
                        break;
                case 'u':
                        if (!hex4(j->p + 2, q, &cp))
                                return fail(j, j->p, "\\u needs four hexadecimal digits");
                        j->p += 4;
                        if (cp >= 0xd800 && cp <= 0xdbff && q - j->p >= 8 && j->p[2] == '\\' &&
                            j->p[3] == 'u' && hex4(j->p + 4, q, &low) && low >= 0xdc00 && low <= 0xdfff) {
                                cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
                                j->p += 6;
                        } else if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff)) {
                                representable = false;
                                break;
                        }
                        k += utf8_put(s + k, cp);
                        break;
                default:
                        return fail(j, j->p, "unknown escape in a string");
                }
                j->p += 2;
        }
        j->p = q + 1;
        s[k] = '\0';
        *ret = TAKE_PTR(s);
        *ret_representable = representable;
        return 0;
}

static int parse_string_value(JsonParser *j, cJSON **ret) {
        const char *start = j->p;
        _cleanup_free_ char *s = NULL, *token = NULL;
        bool representable;
        int r;

        r = parse_string(j, &s, &representable);
        if (r < 0)
                return r;
        if (representable)
                *ret = cJSON_CreateString(s);
        else {
                token = strndup(start, (size_t) (j->p - start));
                if (!token)
                        return -ENOMEM;
                *ret = cJSON_CreateRaw(token);
        }
        return *ret ? 0 : -ENOMEM;
}

/* Arrays and objects: "[" value ("," value)* "]" and "{" string ":" value ("," ...)* "}". */
static int parse_container(JsonParser *j, bool object, cJSON **ret) {
        _cleanup_(cJSON_Deletep) cJSON *c = object ? cJSON_CreateObject() : cJSON_CreateArray();
        char close = object ? '}' : ']';
        int r;

        if (!c)
                return -ENOMEM;
        if (++j->depth > JSON_EXACT_DEPTH_MAX)
                return fail(j, j->p, "arrays and objects nest deeper than 1000 levels");
        j->p++;
        skip_space(j);
        if (at(j, close)) {
                j->p++;
                j->depth--;
                *ret = TAKE_PTR(c);
                return 0;
        }

        for (;;) {
                _cleanup_free_ char *key = NULL;
                cJSON *item = NULL;

                skip_space(j);
                if (object) {
                        bool representable;

                        if (!at(j, '"'))
                                return fail(j, j->p, "expected a string as the key of an object member");
                        r = parse_string(j, &key, &representable);
                        if (r < 0)
                                return r;
                        if (!representable)
                                return fail(j, j->p - 1,
                                            "object keys holding \\u0000 or an unpaired surrogate are not supported");
                        skip_space(j);
                        if (!at(j, ':'))
                                return fail(j, j->p, "expected ':' after the key of an object member");
                        j->p++;
                }
                r = parse_value(j, &item);
                if (r < 0)
                        return r;
                r = json_attach(c, key, item);
                if (r < 0)
                        return r;
                skip_space(j);
                if (at(j, ',')) {
                        j->p++;
                        continue;
                }
                if (at(j, close)) {
                        j->p++;
                        break;
                }
                return fail(j, j->p, object ? "expected ',' or '}' in an object" : "expected ',' or ']' in an array");
        }
        j->depth--;
        *ret = TAKE_PTR(c);
        return 0;
}

static int parse_literal(JsonParser *j, const char *word, cJSON *(*create)(void), cJSON **ret) {
        size_t l = strlen(word);

        if ((size_t) (j->end - j->p) < l || memcmp(j->p, word, l) != 0)
                return fail(j, j->p, "unexpected character");
        j->p += l;
        *ret = create();
        return *ret ? 0 : -ENOMEM;
}

static cJSON *create_true(void) {
        return cJSON_CreateTrue();
}

static int parse_value(JsonParser *j, cJSON **ret) {
        skip_space(j);
        if (j->p >= j->end)
                return fail(j, j->p, "unexpected end of the text, a value was expected");
        switch (*j->p) {
        case '{':
                return parse_container(j, true, ret);
        case '[':
                return parse_container(j, false, ret);
        case '"':
                return parse_string_value(j, ret);
        case 't':
                return parse_literal(j, "true", create_true, ret);
        case 'f':
                return parse_literal(j, "false", cJSON_CreateFalse, ret);
        case 'n':
                return parse_literal(j, "null", cJSON_CreateNull, ret);
        case '-':
        case '0' ... '9':
                return parse_number(j, ret);
        default:
                return fail(j, j->p, "unexpected character");
        }
}

int json_parse_exact(const char *text, size_t n, cJSON **ret, char **error) {
        JsonParser j = { .text = text, .p = text, .end = text + n };
        _cleanup_(cJSON_Deletep) cJSON *v = NULL;
        unsigned line = 1;
        const char *bol = text;
        int r;

        if (n >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
                r = fail(&j, text, "a byte order mark is not allowed");
        else {
                r = parse_value(&j, &v);
                if (r >= 0) {
                        skip_space(&j);
                        if (j.p < j.end)
                                r = fail(&j, j.p, "unexpected text after the JSON value");
                }
        }
        if (r == -ENOMEM)
                return error_setf(error, r, "Out of memory");
        if (r < 0) {
                for (const char *p = text; p < j.error_at; p++)
                        if (*p == '\n') {
                                line++;
                                bol = p + 1;
                        }
                /* The character itself when it can be shown; a byte of a UTF-8 sequence cannot. */
                if (streq(j.error, "unexpected character") && j.error_at < j.end && *j.error_at > 0x20 && *j.error_at < 0x7f)
                        return error_setf(error, r, "line %u, column %zu: unexpected character '%c'", line,
                                          (size_t) (j.error_at - bol) + 1, *j.error_at);
                return error_setf(error, r, "line %u, column %zu: %s", line,
                                  (size_t) (j.error_at - bol) + 1, j.error);
        }
        *ret = TAKE_PTR(v);
        return 0;
}

cJSON *json_parse_keeping_exact(const char *text, const char *key) {
        _cleanup_(cJSON_Deletep) cJSON *j = NULL, *exact = NULL;
        cJSON *member;

        j = cJSON_ParseWithOpts(text, NULL, true);
        if (!cJSON_IsObject(j) || json_parse_exact(text, strlen(text), &exact, NULL) < 0)
                return TAKE_PTR(j);
        member = cJSON_DetachItemFromObjectCaseSensitive(exact, key);
        if (member && !cJSON_ReplaceItemInObjectCaseSensitive(j, key, member))
                cJSON_Delete(member);
        return TAKE_PTR(j);
}

int json_exact_get_unsigned(const cJSON *item, unsigned *ret) {
        unsigned u;
        int r;

        if (cJSON_IsRaw(item)) {
                r = safe_atou(item->valuestring, &u);
                if (r < 0)
                        return r;
        } else if (cJSON_IsNumber(item)) {
                if (item->valuedouble < 0 || item->valuedouble > UINT_MAX ||
                    item->valuedouble != (double) (unsigned) item->valuedouble)
                        return -EINVAL;
                u = (unsigned) item->valuedouble;
        } else
                return -EINVAL;

        *ret = u;
        return 0;
}

cJSON *json_create_uint64(uint64_t v) {
        char buf[DECIMAL_STR_MAX(uint64_t)];

        (void) snprintf(buf, sizeof(buf), "%" PRIu64, v);
        return cJSON_CreateRaw(buf);
}

cJSON *json_add_uint64(cJSON *object, const char *key, uint64_t v) {
        cJSON *item = json_create_uint64(v);

        return json_attach(object, key, item) < 0 ? NULL : item;
}
