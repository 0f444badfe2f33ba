/* The encodings the MCP server speaks beyond JSON: resource URIs (skill://NAME/PATH and
 * skilld-run://RUN-ID/PATH, the path percent-encoded where RFC 3986 wants it), base64 for input
 * files and binary resources, and the media types resources are labelled with. Pure functions:
 * the unit tests (tests/mcp/test-mcp-units.c) link this file alone. */
#include "mcp-encode.h"

static bool uri_char_plain(unsigned char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               strchr("-._~/!$&'()*+,;=:@", c);
}

char *mcp_resource_uri(const char *scheme, const char *authority, const char *path) {
        size_t n = strlen(path);
        char *uri = malloc(strlen(scheme) + 3 + strlen(authority) + 1 + 3 * n + 1), *p;

        if (!uri)
                return NULL;
        p = stpcpy(stpcpy(stpcpy(stpcpy(uri, scheme), "://"), authority), "/");
        for (size_t i = 0; i < n; i++) {
                unsigned char c = path[i];

                if (c && uri_char_plain(c))
                        *p++ = c;
                else
                        p += sprintf(p, "%%%02X", c);
        }
        *p = '\0';
        return uri;
}

char *mcp_skill_uri(const char *name, const char *path) {
        return mcp_resource_uri("skill", name, path);
}

static int unhex(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -EINVAL;
}

int mcp_uri_split(const char *uri, const char *scheme, char **ret_authority, char **ret_path) {
        _cleanup_free_ char *authority = NULL, *path = NULL;
        const char *p = startswith(uri, scheme), *slash;
        char *o;

        if (!p || !(p = startswith(p, "://")) || !(slash = strchr(p, '/')) || slash == p)
                return -EINVAL;
        authority = strndup(p, slash - p);
        path = malloc(strlen(slash + 1) + 1);
        if (!authority || !path)
                return -ENOMEM;
        o = path;
        for (p = slash + 1; *p; p++) {
                if (*p == '%') {
                        int h = unhex(p[1]), l = h < 0 ? -EINVAL : unhex(p[2]);

                        if (h < 0 || l < 0 || (h == 0 && l == 0))
                                return -EINVAL;
                        *o++ = (char) (h * 16 + l);
                        p += 2;
                } else if (*p == '?' || *p == '#')
                        return -EINVAL;
                else
                        *o++ = *p;
        }
        *o = '\0';
        *ret_authority = TAKE_PTR(authority);
        *ret_path = TAKE_PTR(path);
        return 0;
}

const char *mcp_mime_type(const char *path) {
        static const struct {
                const char *suffix, *type;
        } table[] = {
                { ".md", "text/markdown" },     { ".txt", "text/plain" },      { ".py", "text/x-python" },
                { ".sh", "text/x-shellscript" }, { ".js", "text/javascript" }, { ".mjs", "text/javascript" },
                { ".ts", "text/plain" },        { ".json", "application/json" }, { ".yaml", "application/yaml" },
                { ".yml", "application/yaml" }, { ".csv", "text/csv" },        { ".html", "text/html" },
                { ".xml", "application/xml" },  { ".png", "image/png" },       { ".jpg", "image/jpeg" },
                { ".jpeg", "image/jpeg" },      { ".gif", "image/gif" },       { ".svg", "image/svg+xml" },
                { ".pdf", "application/pdf" },  { ".zip", "application/zip" },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (endswith(path, table[i].suffix))
                        return table[i].type;
        return "application/octet-stream";
}

bool mcp_is_text(const char *data, size_t size) {
        return !memchr(data, '\0', size) && utf8_is_valid(data, size);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *mcp_base64_encode(const char *data, size_t size) {
        const unsigned char *d = (const unsigned char *) data;
        char *out = malloc((size + 2) / 3 * 4 + 1), *p = out;

        if (!out)
                return NULL;
        for (size_t i = 0; i < size; i += 3) {
                uint32_t v = (uint32_t) d[i] << 16 | (i + 1 < size ? (uint32_t) d[i + 1] << 8 : 0) |
                             (i + 2 < size ? d[i + 2] : 0);

                *p++ = b64[v >> 18 & 63];
                *p++ = b64[v >> 12 & 63];
                *p++ = i + 1 < size ? b64[v >> 6 & 63] : '=';
                *p++ = i + 2 < size ? b64[v & 63] : '=';
        }
        *p = '\0';
        return out;
}

int mcp_base64_decode(const char *text, char **ret, size_t *ret_size) {
        size_t n = strlen(text), pad = 0, k = 0;
        _cleanup_free_ char *out = NULL;
        uint32_t v = 0;

        if (n % 4 != 0)
                return -EINVAL;
        if (n > 0 && text[n - 1] == '=')
                pad = n > 1 && text[n - 2] == '=' ? 2 : 1;
        out = malloc(n / 4 * 3 + 1);
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const char *c = i < n - pad ? strchr(b64, text[i]) : NULL;

                if (i < n - pad && (!c || !text[i]))
                        return -EINVAL;
                v = v << 6 | (c ? (uint32_t) (c - b64) : 0);
                if (i % 4 == 3) {
                        out[k++] = (char) (v >> 16);
                        out[k++] = (char) (v >> 8);
                        out[k++] = (char) v;
                        v = 0;
                }
        }
        k -= pad;
        out[k] = '\0';
        *ret = TAKE_PTR(out);
        *ret_size = k;
        return 0;
}
