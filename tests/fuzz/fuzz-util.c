/* See fuzz.h. These run once per input, so they stay cheap: no /proc walks, one readdir. */
#include <dirent.h>
#include <sys/mman.h>

#include "fuzz.h"

void fuzz_fail(const char *file, unsigned line, const char *cond, const char *fmt, ...) {
        va_list ap;

        fprintf(stderr, "\n==fuzz== promise broken at %s:%u: %s\n", file, line, cond);
        if (!streq(fmt, " ")) {
                fputs("==fuzz==", stderr);
                va_start(ap, fmt);
                vfprintf(stderr, fmt, ap);
                va_end(ap);
                fputc('\n', stderr);
        }
        fflush(stderr);
        abort();
}

int fuzz_lowest_free_fd(void) {
        /* open() takes the lowest free number, whichever of 0, 1, 2 a runner left closed. */
        int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

        fuzz_assert(fd >= 0, "open(/): %m");
        (void) close(fd);
        return fd;
}

static char *scratch_path;
static int scratch_fd = -EBADF;

static void scratch_remove(void) {
        scratch_fd = safe_close(scratch_fd);
        if (scratch_path)
                (void) rm_rf_at(AT_FDCWD, scratch_path);
        free(scratch_path);
        scratch_path = NULL;
}

int fuzz_scratch_fd(void) {
        int r;

        if (scratch_fd >= 0)
                return scratch_fd;
        r = mkdtemp_malloc("skilld-fuzz-XXXXXX", &scratch_path);
        fuzz_assert(r >= 0, "cannot create a scratch directory: %s", strerror(-r));
        scratch_fd = open(scratch_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        fuzz_assert(scratch_fd >= 0, "%s: %m", scratch_path);
        (void) atexit(scratch_remove);
        return scratch_fd;
}

static int cmp_strp(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

char *fuzz_list_dir(int dir_fd) {
        _cleanup_strv_free_ char **names = NULL;
        size_t len = 1;
        struct dirent *de;
        char *s, *t;
        DIR *d;
        int fd;

        fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        fuzz_assert(fd >= 0, "%m");
        d = fdopendir(fd);
        fuzz_assert(d, "%m");
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        fuzz_assert(strv_extend(&names, de->d_name) >= 0);
        closedir(d);

        if (names)
                qsort(names, strv_length(names), sizeof(char *), cmp_strp);
        STRV_FOREACH(n, names)
                len += strlen(*n) + 1;
        s = t = malloc(len);
        fuzz_assert(s);
        STRV_FOREACH(n, names)
                t = stpcpy(stpcpy(t, n == names ? "" : " "), *n);
        *t = '\0';
        return s;
}

bool fuzz_text_is_safe(const char *s) {
        const unsigned char *p = (const unsigned char *) s;
        size_t n;

        if (!s)
                return false;
        n = strlen(s);
        if (!utf8_is_valid(s, n) || string_has_cc(s, n))
                return false;
        /* U+0080..U+009F are 0xc2 0x80..0x9f in UTF-8; 0x9b alone is CSI to some terminals. */
        for (size_t i = 0; i + 1 < n; i++)
                if (p[i] == 0xc2 && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f)
                        return false;
        return true;
}

int fuzz_memfd(const char *name, const uint8_t *data, size_t size) {
        int fd = memfd_create(name, MFD_CLOEXEC);

        fuzz_assert(fd >= 0, "memfd_create: %m");
        fuzz_assert(loop_write(fd, data, size) >= 0);
        fuzz_assert(lseek(fd, 0, SEEK_SET) == 0);
        return fd;
}

bool fuzz_loader_code_is_documented(int r) {
        static const int codes[] = {
                -ENOMEM, -EINVAL, -EPERM, -EEXIST, -E2BIG, -EFBIG, -EPROTONOSUPPORT, -EBADMSG,
        };

        for (size_t i = 0; i < ELEMENTSOF(codes); i++)
                if (r == codes[i])
                        return true;
        return false;
}

bool fuzz_take(FuzzReader *r, size_t n, const uint8_t **ret) {
        if (r->size < n)
                return false;
        *ret = r->data;
        r->data += n;
        r->size -= n;
        return true;
}

uint8_t fuzz_byte(FuzzReader *r) {
        const uint8_t *p;

        return fuzz_take(r, 1, &p) ? *p : 0;
}

char *fuzz_string(FuzzReader *r) {
        size_t n = fuzz_byte(r) % 64;
        const uint8_t *p;
        char *s;

        if (!fuzz_take(r, n, &p))
                n = 0, p = (const uint8_t *) "";
        s = strndup((const char *) p, n);
        fuzz_assert(s);
        return s;
}

char *fuzz_word_or_string(FuzzReader *r, const char *const *words, size_t n_words) {
        uint8_t b = fuzz_byte(r);
        char *s;

        if (b >= 0x80)
                return fuzz_string(r);
        s = strdup(words[b % n_words]);
        fuzz_assert(s);
        return s;
}

uint64_t fuzz_number(FuzzReader *r, const uint64_t *special, size_t n_special) {
        const uint8_t *p;
        uint64_t v = 0;
        uint8_t b = fuzz_byte(r);

        if (b < 0x80)
                return special[b % n_special];
        if (fuzz_take(r, 8, &p))
                memcpy(&v, p, 8);
        return v;
}
