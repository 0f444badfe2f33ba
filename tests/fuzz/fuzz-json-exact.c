/* Fuzz target "json-exact": the strict reader of what skills write as their output (the input is
 * the whole text, NULs included, as output.json may hold them).
 *
 * Promises checked: a refusal says where ("line L, column C: ...") within the text and is fit
 * for a terminal; what is accepted prints (compact and indented) to a text the reader accepts
 * again and that prints back identically, so every number and raw string survives any number of
 * round trips; each number in that print is a token the input holds; and the reader never
 * accepts a text with trailing content after the value. */
#include <cjson/cJSON.h>

#include "fuzz.h"
#include "json-exact.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

static bool raw_tokens_in(const cJSON *j, const uint8_t *data, size_t size) {
        for (; j; j = j->next) {
                if (cJSON_IsRaw(j) && !memmem(data, size, j->valuestring, strlen(j->valuestring)))
                        return false;
                if (!raw_tokens_in(j->child, data, size))
                        return false;
        }
        return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(cJSON_Deletep) cJSON *j = NULL, *back = NULL, *indented_back = NULL;
        _cleanup_free_ char *error = NULL, *printed = NULL, *again = NULL, *indented = NULL,
                            *indented_again = NULL;
        unsigned line;
        size_t column;
        int r;

        r = json_parse_exact((const char *) data, size, &j, &error);
        if (r < 0) {
                fuzz_assert(r == -EINVAL && !j && error, "refused without a message: %d", r);
                fuzz_assert(sscanf(error, "line %u, column %zu: ", &line, &column) == 2 && line >= 1 &&
                            line <= size + 1 && column >= 1 && column <= size + 1,
                            "refusal names no place in the text: %s", error);
                fuzz_assert(fuzz_text_is_safe(error), "refusal not fit for a terminal");
                return 0;
        }

        fuzz_assert(j && raw_tokens_in(j, data, size), "a raw token the input does not hold");
        printed = cJSON_PrintUnformatted(j);
        indented = cJSON_Print(j);
        fuzz_assert(printed && indented);
        fuzz_assert(json_parse_exact(printed, strlen(printed), &back, NULL) == 0,
                    "printed text refused: %s", printed);
        again = cJSON_PrintUnformatted(back);
        fuzz_assert(again && streq(again, printed), "changed in a round trip: %s", printed);
        fuzz_assert(json_parse_exact(indented, strlen(indented), &indented_back, NULL) == 0,
                    "indented text refused: %s", indented);
        indented_again = cJSON_PrintUnformatted(indented_back);
        fuzz_assert(indented_again && streq(indented_again, printed), "indenting changed: %s", indented);
        return 0;
}
