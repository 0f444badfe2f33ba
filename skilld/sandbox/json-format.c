/* See json-format.h. */
#include <stdlib.h>
#include <string.h>

#include "json-format.h"
#include "util.h"

char *json_format(const cJSON *j) {
        _cleanup_free_ char *text = cJSON_Print(j);
        size_t tabs = 0, n, k = 0;
        bool line_start = true;
        char *out;

        if (!text)
                return NULL;
        /* cJSON escapes every tab inside a string, so each raw tab is its own layout: indentation
         * at the start of a line, else the gap after a key's colon. */
        n = strlen(text);
        for (size_t i = 0; i < n; i++)
                tabs += text[i] == '\t';
        out = malloc(n + tabs + 2);
        if (!out)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                if (text[i] == '\t') {
                        out[k++] = ' ';
                        if (line_start)
                                out[k++] = ' ';
                        continue;
                }
                line_start = text[i] == '\n';
                out[k++] = text[i];
        }
        out[k++] = '\n';
        out[k] = '\0';
        return out;
}
