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
