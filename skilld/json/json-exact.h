/* JSON kept as it was written. cJSON reads every number into a double, so 12345678901234567890
 * comes back as 1.2345678901234567e+19 and 1.0 as 1: fine for our own fields, wrong for what a
 * skill wrote. This parser checks a text strictly against RFC 8259 and builds a cJSON tree whose
 * numbers are raw items holding their tokens as written; cJSON prints raw items verbatim, so a
 * tree read here and printed by cJSON keeps every number exactly (only the layout may change). */
#pragma once

#include <cjson/cJSON.h>

#include "util.h"

/* How deep arrays and objects may nest (cJSON's own limit). */
#define JSON_EXACT_DEPTH_MAX 1000U

/* Parses n bytes of text as one JSON value (RFC 8259: UTF-8, no byte order mark, whitespace
 * around). Numbers become raw items with their tokens; strings are decoded, except those holding
 * \u0000 or an unpaired surrogate, which cJSON cannot represent: they stay raw tokens too. On
 * failure returns -EINVAL (-ENOMEM) and, with error, says what is wrong and where
 * ("line 2, column 7: leading zeros are not allowed in numbers"). */
int json_parse_exact(const char *text, size_t n, cJSON **ret, char **error);

/* Parses a NUL-terminated JSON object with cJSON, whose numbers are doubles for the reader's convenience, then
 * puts the exact form of the member named key in place of the double-based one. When the text
 * is cJSON's JSON but not strictly valid (a record written by an older version), the member
 * stays as cJSON read it. Returns NULL when the text is not JSON. */
cJSON *json_parse_keeping_exact(const char *text, const char *key);

/* A whole number of an exact tree (a raw token) or of a cJSON one (a double holding an integer),
 * as unsigned. -EINVAL when the item is not such a number or is out of range. */
int json_exact_get_unsigned(const cJSON *item, unsigned *ret);

/* Takes item into container under key (appended to an array when key is NULL), or frees it:
 * ownership passes either way, so a chain of additions leaks nothing when one fails. -ENOMEM
 * when item is NULL (its creation failed) or cannot be added. */
int json_attach(cJSON *container, const char *key, cJSON *item);

/* A whole number written with all its digits: a raw item. cJSON's own numbers are doubles,
 * printed in exponent form wherever that round-trips (a timestamp in microseconds ending in 0
 * came out as 1.79574581105335e+15), and not exactly above 2^53. Readers get the same number
 * either way. NULL without memory. */
cJSON *json_create_uint64(uint64_t v);

/* Adds json_create_uint64(v) to object under key; returns the item, or NULL without memory (the
 * object unchanged). */
cJSON *json_add_uint64(cJSON *object, const char *key, uint64_t v);
