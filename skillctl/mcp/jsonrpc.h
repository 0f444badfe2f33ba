/* JSON-RPC 2.0 as MCP's stdio transport carries it: one message per line, UTF-8, no batches.
 *
 * Everything here is hostile input first. A line longer than JSONRPC_LINE_MAX is dropped as it
 * arrives (never buffered whole), nesting deeper than JSONRPC_DEPTH_MAX is refused before cJSON
 * recurses into it, and every refusal comes back as the JSON-RPC error a client should see.
 * Ids, progress tokens and the values a skill gets are kept as their exact JSON text (cJSON holds
 * numbers as doubles, which would turn 9007199254740993 into ...992). Nothing here does I/O. */
#pragma once

#include <cjson/cJSON.h>

#include "util.h"

/* A run's input files travel base64-encoded inside the request: room for a few MiB of them. */
#define JSONRPC_LINE_MAX (48U * 1024U * 1024U)
#define JSONRPC_DEPTH_MAX 64U

#define JSONRPC_PARSE_ERROR -32700
#define JSONRPC_INVALID_REQUEST -32600
#define JSONRPC_METHOD_NOT_FOUND -32601
#define JSONRPC_INVALID_PARAMS -32602
#define JSONRPC_INTERNAL_ERROR -32603

typedef enum JsonRpcKind {
        JSONRPC_REQUEST,                /* method and id */
        JSONRPC_NOTIFICATION,           /* method, no id */
        JSONRPC_RESPONSE,               /* id and result or error: we send no requests, so ignored */
} JsonRpcKind;

typedef struct JsonRpcMessage {
        JsonRpcKind kind;
        cJSON *root;
        const char *method;             /* points into root */
        const cJSON *params;            /* NULL when absent; an object otherwise */
        char *id;                       /* the id's JSON text as sent (a string or a number), or NULL */
        char *text;                     /* the line itself, for exact values (json_find_raw()) */
} JsonRpcMessage;

void jsonrpc_message_done(JsonRpcMessage *m);

/* An error to send back: code, message, and the id's JSON text if it could be read. */
typedef struct JsonRpcError {
        int code;
        char *message;
        char *id;
} JsonRpcError;

void jsonrpc_error_done(JsonRpcError *e);
/* Fills *e (a message failing to format leaves it NULL: the caller says something generic);
 * returns -EBADMSG, what the decoder and the method handlers return for an error to send. */
int jsonrpc_error_setv(JsonRpcError *e, int code, const char *id, const char *fmt, va_list ap) _printf_(4, 0);

/* Decodes one line (without its newline; may hold NUL bytes, which are refused). Returns 0 with
 * *ret filled, or -EBADMSG with *ret_error filled. Only -ENOMEM otherwise. */
int jsonrpc_decode(const char *line, size_t size, JsonRpcMessage *ret, JsonRpcError *ret_error);

/* Splits a byte stream into lines. Feed it what read() returned; it calls back once per line
 * (too_long set, line empty, for a line that passed JSONRPC_LINE_MAX: it was dropped). */
typedef struct LineReader {
        char *buf;
        size_t size, allocated;
        size_t max;                     /* 0: JSONRPC_LINE_MAX */
        bool skipping;                  /* dropping the rest of an over-long line */
} LineReader;

typedef int (*line_handler_t)(const char *line, size_t size, bool too_long, void *userdata);

int line_reader_feed(LineReader *r, const char *data, size_t n, line_handler_t handler, void *userdata);
/* At end of input: a last line without a newline is still a line. */
int line_reader_finish(LineReader *r, line_handler_t handler, void *userdata);
void line_reader_done(LineReader *r);

/* Where the value of key is, in the JSON object text holds at its top level (the first one, as
 * cJSON's lookup takes the first); text must be valid JSON, as jsonrpc_decode() checked. Returns
 * the value's start and length, or NULL. path is keys separated by '\n', walked down objects. */
const char *json_find_raw(const char *text, const char *path, size_t *ret_size);

/* Checks that text (valid JSON) nests no deeper than max. */
bool json_depth_ok(const char *text, size_t size, unsigned max);

/* {"jsonrpc":"2.0","id":ID,"result":RESULT} and the error twin, as one line with its newline.
 * result is taken. */
char *jsonrpc_format_result(const char *id, cJSON *result);
char *jsonrpc_format_error(const char *id, int code, const char *message);
/* {"jsonrpc":"2.0","method":M,"params":P}; params is taken. */
char *jsonrpc_format_notification(const char *method, cJSON *params);
