/* Resource URIs, base64 and media types for the MCP server (encode.c). */
#pragma once

#include "util.h"

/* "SCHEME://AUTHORITY/PATH" with PATH percent-encoded where needed. */
char *mcp_resource_uri(const char *scheme, const char *authority, const char *path);
/* "skill://NAME/PATH". */
char *mcp_skill_uri(const char *name, const char *path);
/* Splits a URI "SCHEME://AUTHORITY/PATH" of scheme into authority and the decoded path; -EINVAL
 * for another scheme, no path, a query or fragment, a bad or NUL escape. */
int mcp_uri_split(const char *uri, const char *scheme, char **ret_authority, char **ret_path);
const char *mcp_mime_type(const char *path);
/* Whether data can go as a resource's "text" (UTF-8, no NUL), else as a base64 "blob". */
bool mcp_is_text(const char *data, size_t size);
char *mcp_base64_encode(const char *data, size_t size);
/* Strict RFC 4648 with padding; -EINVAL otherwise. */
int mcp_base64_decode(const char *text, char **ret, size_t *ret_size);
