/* A stand-in for libFuzzer's main(): runs a target over saved inputs, so the regression inputs
 * and the generated seeds are checked by every build, gcc included, without the fuzzer runtime.
 *
 *   fuzz-<target>-replay PATH...
 *
 * A PATH is a file or a directory of files (not recursive, in sorted order). A file whose name
 * ends in ".b64" holds its input base64-encoded, so binary inputs can live in git as text. A
 * broken promise or a sanitizer report aborts, which fails the test. */
#include <dirent.h>
#include <sys/stat.h>

#include "fileio.h"
#include "fuzz.h"

/* Inputs larger than this are not what the targets are fuzzed with; refuse rather than guess. */
#define INPUT_MAX (16U * 1024U * 1024U)

static int b64_value(unsigned char c) {
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+')
                return 62;
        if (c == '/')
                return 63;
        return -1;
}

/* Decodes in place; whitespace is skipped, '=' ends the data. */
static int b64_decode(char *s, size_t n, size_t *ret_size) {
        uint32_t acc = 0;
        size_t out = 0;
        unsigned bits = 0;

        for (size_t i = 0; i < n; i++) {
                unsigned char c = s[i];
                int v;

                if (c == '=')
                        break;
                if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
                        continue;
                v = b64_value(c);
                if (v < 0)
                        return -EINVAL;
                acc = (acc << 6) | (uint32_t) v;
                bits += 6;
                if (bits >= 8) {
                        bits -= 8;
                        s[out++] = (char) ((acc >> bits) & 0xff);
                }
        }
        *ret_size = out;
        return 0;
}

static int replay_file(int dir_fd, const char *name, const char *display) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        int r;

        r = read_full_file_at(dir_fd, name, INPUT_MAX, false, &buf, &size);
        if (r < 0) {
                fprintf(stderr, "%s: cannot read: %s\n", display, strerror(-r));
                return r;
        }
        if (endswith(name, ".b64")) {
                r = b64_decode(buf, size, &size);
                if (r < 0) {
                        fprintf(stderr, "%s: not base64\n", display);
                        return r;
                }
        }
        fprintf(stderr, "replaying %s (%zu bytes)\n", display, size);
        /* A copy of exactly size bytes, so ASan sees reads past the end as libFuzzer would. */
        {
                _cleanup_free_ uint8_t *exact = malloc(size ?: 1);

                if (!exact)
                        return -ENOMEM;
                memcpy(exact, buf, size);
                (void) LLVMFuzzerTestOneInput(exact, size);
        }
        return 0;
}

static int cmp_strp(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

static int replay_dir(const char *path, unsigned *count) {
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct dirent *de;
        DIR *d;
        int r = 0;

        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = opendir(path);
        if (!d)
                return -errno;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.' && strv_extend(&names, de->d_name) < 0) {
                        closedir(d);
                        return -ENOMEM;
                }
        closedir(d);
        if (names)
                qsort(names, strv_length(names), sizeof(char *), cmp_strp);

        STRV_FOREACH(n, names) {
                _cleanup_free_ char *display = strjoin_path(path, *n);
                struct stat st;

                if (!display)
                        return -ENOMEM;
                if (fstatat(fd, *n, &st, 0) < 0 || !S_ISREG(st.st_mode))
                        continue;
                r = replay_file(fd, *n, display);
                if (r < 0)
                        return r;
                (*count)++;
        }
        return 0;
}

int main(int argc, char *argv[]) {
        unsigned count = 0;
        int r;

        if (LLVMFuzzerInitialize)
                (void) LLVMFuzzerInitialize(&argc, &argv);

        for (int i = 1; i < argc; i++) {
                struct stat st;

                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "%s: %m\n", argv[i]);
                        return EXIT_FAILURE;
                }
                if (S_ISDIR(st.st_mode))
                        r = replay_dir(argv[i], &count);
                else {
                        r = replay_file(AT_FDCWD, argv[i], argv[i]);
                        count++;
                }
                if (r < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(-r));
                        return EXIT_FAILURE;
                }
        }
        fprintf(stderr, "%u input%s replayed without a finding\n", count, count == 1 ? "" : "s");
        return EXIT_SUCCESS;
}
