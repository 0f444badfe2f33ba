/* What every fuzz target shares. A target is one fuzz-<name>.c defining LLVMFuzzerTestOneInput()
 * (and, if it needs set-up, LLVMFuzzerInitialize()); the same file links against libFuzzer for
 * fuzzing and against fuzz-replay.c for replaying saved inputs in the plain unit build.
 *
 * Targets check more than "did not crash": each states what the code under test promises
 * (nothing written outside the target directory, no leaked fd, messages safe for a terminal)
 * and aborts when a promise is broken, which libFuzzer and the replay driver both treat as a
 * failure with the input kept. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "fileio.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional: weak, so that a target without set-up need not define it. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

/* Aborts with a message when cond is false: a broken promise is a finding like a crash. The
 * format gets a leading space so that it is never empty (-Wformat-zero-length). */
#define fuzz_assert(cond, ...)                                                  \
        do {                                                                    \
                if (_unlikely_(!(cond)))                                        \
                        fuzz_fail(__FILE__, __LINE__, #cond, " " __VA_ARGS__);  \
        } while (0)

_noreturn_ _printf_(4, 5)
void fuzz_fail(const char *file, unsigned line, const char *cond, const char *fmt, ...);

/* The lowest free fd number. Taken before and after one input, the two must match: a leaked fd
 * would occupy that very number. */
int fuzz_lowest_free_fd(void);

/* A private scratch directory under $TMPDIR, created on first use and removed at exit. */
int fuzz_scratch_fd(void);

/* The names in dir_fd, sorted and joined by spaces (an empty string when it is empty). */
char *fuzz_list_dir(int dir_fd);

/* Whether a message is fit for a terminal or a log line: no C0 control characters, no DEL, no
 * C1 control characters and valid UTF-8. NULL is not. */
bool fuzz_text_is_safe(const char *s);

/* A memfd holding data, its offset at 0. */
int fuzz_memfd(const char *name, const uint8_t *data, size_t size);

/* Whether r is one of the loader's documented refusals (loader.h), or -ENOMEM. */
bool fuzz_loader_code_is_documented(int r);

/* A fuzz input read as a recipe, from the front: a target that builds structured values (bus
 * messages, options) takes its choices from it. Past the end every read gives zeros or empty
 * strings, so any input is a complete recipe. */
typedef struct FuzzReader {
        const uint8_t *data;
        size_t size;
} FuzzReader;

/* The next n bytes, or false (and nothing taken) when fewer are left. */
bool fuzz_take(FuzzReader *r, size_t n, const uint8_t **ret);
/* The next byte, 0 past the end. */
uint8_t fuzz_byte(FuzzReader *r);
/* A string: one length byte (mod 64), then that many bytes; NUL-free, never NULL. */
char *fuzz_string(FuzzReader *r);
/* One of words (a byte below 0x80 picks it) or else fuzz_string(): values that lead somewhere,
 * and anything at all. */
char *fuzz_word_or_string(FuzzReader *r, const char *const *words, size_t n_words);
/* One of special (a byte below 0x80 picks it) or else the next 8 bytes (0 past the end). */
uint64_t fuzz_number(FuzzReader *r, const uint64_t *special, size_t n_special);
