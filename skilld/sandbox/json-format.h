/* JSON as skilld writes it for people and tools alike (result.json, --json): indented with two
 * spaces, "key": value, and a final newline, as editors and `jq .` lay it out. cJSON's own printer
 * indents with tabs and ends without a newline. */
#pragma once

#include <cjson/cJSON.h>

/* The formatted text, or NULL when out of memory. */
char *json_format(const cJSON *j);
