/* See zip-directory.h. The format: local headers with data, then the central directory, then
 * the end of central directory record (EOCD), all little endian (APPNOTE.TXT). */
#include <inttypes.h>
#include <sys/stat.h>

#include "error.h"
#include "loader-internal.h"
#include "zip-directory.h"

#define SIG_LOCAL 0x04034b50U
#define SIG_CENTRAL 0x02014b50U
#define SIG_EOCD 0x06054b50U
#define SIG_ZIP64_LOCATOR 0x07064b50U

#define LOCAL_HEADER_SIZE 30U
#define CENTRAL_HEADER_SIZE 46U
#define EOCD_SIZE 22U
#define ZIP64_LOCATOR_SIZE 20U
#define COMMENT_MAX 0xffffU

#define FLAG_ENCRYPTED 0x0001U
#define FLAG_STRONG_ENCRYPTION 0x0040U
#define FLAG_MASKED_HEADERS 0x2000U

#define METHOD_STORED 0U
#define METHOD_DEFLATE 8U

#define HOST_UNIX 3U
#define DOS_ATTR_DIRECTORY 0x10U

static uint16_t get16(const uint8_t *p) {
        return (uint16_t) (p[0] | (p[1] << 8));
}

static uint32_t get32(const uint8_t *p) {
        return (uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16) | ((uint32_t) p[3] << 24);
}

/* Exactly n bytes at offset, or -EBADMSG if the file ends first. */
static int pread_exact(int fd, void *buf, size_t n, uint64_t offset) {
        size_t done = 0;

        while (done < n) {
                ssize_t k = pread(fd, (char *) buf + done, n - done, (off_t) (offset + done));
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        return -EBADMSG;
                done += k;
        }
        return 0;
}

ZipDirectory *zip_directory_free(ZipDirectory *z) {
        if (!z)
                return NULL;
        for (size_t i = 0; i < z->n; i++) {
                free(z->entries[i].name);
                free(z->entries[i].path);
        }
        free(z->entries);
        free(z);
        return NULL;
}

/* Names a few formats people rename to .skill by mistake (or not), for a better message. */
static const char *guess_format(int fd) {
        static const struct {
                const char *what;
                size_t offset;
                const char *magic;
                size_t len;
        } magics[] = {
                { "a gzip file", 0, "\x1f\x8b", 2 },
                { "a 7z archive", 0, "7z\xbc\xaf\x27\x1c", 6 },
                { "a RAR archive", 0, "Rar!\x1a\x07", 6 },
                { "an xz file", 0, "\xfd" "7zXZ", 5 },
                { "a bzip2 file", 0, "BZh", 3 },
                { "a zstd file", 0, "\x28\xb5\x2f\xfd", 4 },
                { "a tar archive", 257, "ustar", 5 },
        };
        uint8_t head[512];
        ssize_t k;

        k = pread(fd, head, sizeof(head), 0);
        if (k <= 0)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(magics); i++)
                if (magics[i].offset + magics[i].len <= (size_t) k &&
                    memcmp(head + magics[i].offset, magics[i].magic, magics[i].len) == 0)
                        return magics[i].what;
        return NULL;
}

static int not_zip(int fd, char **error) {
        const char *what = guess_format(fd);

        if (what)
                return error_setf(error, -EPROTONOSUPPORT, "not a zip archive (this is %s)", what);
        return error_setf(error, -EPROTONOSUPPORT, "not a zip archive");
}

/* Finds the EOCD record: the last one whose comment reaches exactly to the end of the file. */
static int find_eocd(int fd, uint64_t size, uint64_t *ret_offset, uint8_t ret_record[static EOCD_SIZE],
                     char **error) {
        _cleanup_free_ uint8_t *tail = NULL;
        size_t tail_len = (size_t) MIN(size, (uint64_t) EOCD_SIZE + COMMENT_MAX);
        int r;

        tail = malloc(tail_len);
        if (!tail)
                return -ENOMEM;
        r = pread_exact(fd, tail, tail_len, size - tail_len);
        if (r < 0)
                return error_setf(error, r, "cannot read the archive: %s", strerror(-r));

        for (size_t i = tail_len - EOCD_SIZE + 1; i-- > 0;)
                if (get32(tail + i) == SIG_EOCD && i + EOCD_SIZE + get16(tail + i + 20) == tail_len) {
                        memcpy(ret_record, tail + i, EOCD_SIZE);
                        *ret_offset = size - tail_len + i;
                        return 0;
                }
        return error_setf(error, -EBADMSG, "corrupt zip archive: no end of central directory record");
}

/* Checks the local header of e against the central directory and finds where its data ends. */
static int check_local_header(int fd, ZipDirEntry *e, uint64_t cd_offset, char **error) {
        _cleanup_free_ char *local_name = NULL;
        uint8_t h[LOCAL_HEADER_SIZE];
        uint16_t name_len, extra_len;
        int r;

        if (e->offset + LOCAL_HEADER_SIZE > cd_offset)
                return loader_entry_error(error, -EBADMSG, e->name,
                                          "local header lies outside the archive data");
        r = pread_exact(fd, h, sizeof(h), e->offset);
        if (r < 0)
                return loader_entry_error(error, r, e->name, "cannot read the local header");
        if (get32(h) != SIG_LOCAL)
                return loader_entry_error(error, -EBADMSG, e->name,
                                          "no local header where the directory says");

        name_len = get16(h + 26);
        extra_len = get16(h + 28);
        if (name_len != e->name_len)
                return loader_entry_error(error, -EBADMSG, e->name,
                                          "local header name differs from the central directory");
        local_name = malloc(name_len + 1);
        if (!local_name)
                return -ENOMEM;
        r = pread_exact(fd, local_name, name_len, e->offset + LOCAL_HEADER_SIZE);
        if (r < 0)
                return loader_entry_error(error, r, e->name, "cannot read the local header");
        if (memcmp(local_name, e->name, name_len) != 0)
                return loader_entry_error(error, -EBADMSG, e->name,
                                          "local header name differs from the central directory");
        if (get16(h + 8) != e->method)
                return loader_entry_error(error, -EBADMSG, e->name,
                                          "local header method differs from the central directory");

        e->data_end = e->offset + LOCAL_HEADER_SIZE + name_len + extra_len + e->compressed_size;
        if (e->data_end > cd_offset)
                return loader_entry_error(error, -EBADMSG, e->name, "data runs into the central directory");
        return 0;
}

/* Reads one central directory header at *pos (advancing it) into e. */
static int read_central_entry(int fd, uint64_t *pos, uint64_t cd_end, size_t index,
                              const LoaderLimits *limits, ZipDirEntry *e, char **error) {
        uint8_t h[CENTRAL_HEADER_SIZE];
        uint16_t made_by, flags, name_len, extra_len, comment_len, disk;
        uint32_t csize, usize, external, offset;
        size_t name_max = MIN(limits->max_path, (size_t) UINT16_MAX) + LOADER_NAME_MAX + 1;
        int r;

        if (*pos + CENTRAL_HEADER_SIZE > cd_end)
                return error_setf(error, -EBADMSG, "corrupt zip archive: central directory is truncated");
        r = pread_exact(fd, h, sizeof(h), *pos);
        if (r < 0)
                return error_setf(error, r, "cannot read the central directory: %s", strerror(-r));
        if (get32(h) != SIG_CENTRAL)
                return error_setf(error, -EBADMSG, "corrupt zip archive: bad central directory entry");

        made_by = get16(h + 4);
        flags = get16(h + 8);
        e->method = get16(h + 10);
        csize = get32(h + 20);
        usize = get32(h + 24);
        name_len = get16(h + 28);
        extra_len = get16(h + 30);
        comment_len = get16(h + 32);
        disk = get16(h + 34);
        external = get32(h + 38);
        offset = get32(h + 42);

        if (*pos + CENTRAL_HEADER_SIZE + name_len + extra_len + comment_len > cd_end)
                return error_setf(error, -EBADMSG, "corrupt zip archive: central directory is truncated");

        /* Read the name first, even when refusing on length, so the message can name it. */
        e->name_len = name_len;
        e->name = malloc((size_t) MIN(name_len, name_max + 1) + 1);
        if (!e->name)
                return -ENOMEM;
        r = pread_exact(fd, e->name, MIN(name_len, name_max + 1), *pos + CENTRAL_HEADER_SIZE);
        if (r < 0)
                return error_setf(error, r, "cannot read the central directory: %s", strerror(-r));
        e->name[MIN(name_len, name_max + 1)] = '\0';
        *pos += CENTRAL_HEADER_SIZE + name_len + extra_len + comment_len;

        if (index >= limits->max_entries)
                return loader_entry_errorn(error, -E2BIG, e->name, MIN(name_len, name_max + 1),
                                           "too many entries (more than %" PRIu64 ")", limits->max_entries);
        if (name_len == 0)
                return error_setf(error, -EINVAL, "entry %zu: empty names are not allowed", index + 1);
        if (name_len > name_max)
                return loader_entry_errorn(error, -EINVAL, e->name, name_max + 1,
                                           "path is longer than %zu bytes",
                                           limits->max_path);
        if (memchr(e->name, '\0', name_len))
                return loader_entry_errorn(error, -EINVAL, e->name, name_len,
                                           "names must not contain NUL bytes");

        if (flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION | FLAG_MASKED_HEADERS))
                return loader_entry_error(error, -EPROTONOSUPPORT, e->name,
                                          "encrypted entries are not supported");
        if (e->method != METHOD_STORED && e->method != METHOD_DEFLATE)
                return loader_entry_error(error, -EPROTONOSUPPORT, e->name,
                                          "compression method %u is not supported (only stored and deflate)",
                                          e->method);
        if (disk != 0)
                return loader_entry_error(error, -EPROTONOSUPPORT, e->name,
                                          "multi-disk archives are not supported");
        if (csize == UINT32_MAX || usize == UINT32_MAX || offset == UINT32_MAX)
                return loader_entry_error(error, -EPROTONOSUPPORT, e->name,
                                          "zip64 entries are not supported");

        e->is_dir = e->name[name_len - 1] == '/';
        if ((made_by >> 8) == HOST_UNIX) {
                mode_t mode = external >> 16;

                switch (mode & S_IFMT) {
                case 0:
                case S_IFREG:
                        break;
                case S_IFDIR:
                        e->is_dir = true;
                        break;
                default:
                        return loader_entry_error(error, -EPERM, e->name, "%s", loader_kind_refusal(mode));
                }
        } else if (external & DOS_ATTR_DIRECTORY)
                e->is_dir = true;

        if (e->is_dir && (csize > 0 || usize > 0))
                return loader_entry_error(error, -EBADMSG, e->name, "a directory entry holds data");

        e->compressed_size = csize;
        e->size = usize;
        e->offset = offset;
        return 0;
}

static int cmp_offset(const void *a, const void *b) {
        const ZipDirEntry *x = *(ZipDirEntry * const *) a, *y = *(ZipDirEntry * const *) b;

        return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Overlapping entries let a small archive expand many times over (one compressed stream shared
 * by many names); no honest zip has them. */
static int check_overlaps(ZipDirectory *z, char **error) {
        _cleanup_free_ ZipDirEntry **order = NULL;

        if (z->n < 2)
                return 0;
        order = calloc(z->n, sizeof(ZipDirEntry *));
        if (!order)
                return -ENOMEM;
        for (size_t i = 0; i < z->n; i++)
                order[i] = &z->entries[i];
        qsort(order, z->n, sizeof(ZipDirEntry *), cmp_offset);
        for (size_t i = 0; i + 1 < z->n; i++)
                if (order[i]->data_end > order[i + 1]->offset) {
                        /* Names are not judged yet: escape this one too. */
                        _cleanup_free_ char *other = cescape(order[i]->name);

                        return loader_entry_error(error, -EBADMSG, order[i + 1]->name,
                                                  "overlaps with entry %s", strna(other));
                }
        return 0;
}

int zip_directory_read(int fd, const LoaderLimits *limits, ZipDirectory **ret, char **error) {
        _cleanup_(zip_directory_freep) ZipDirectory *z = NULL;
        uint8_t eocd[EOCD_SIZE] = {}, magic[4];
        uint64_t eocd_offset = 0, cd_offset, cd_size, pos;
        uint16_t total;
        size_t n_alloc;
        struct stat st;
        int r;

        if (fstat(fd, &st) < 0)
                return error_setf(error, -errno, "cannot stat the archive: %m");
        if (!S_ISREG(st.st_mode))
                return error_setf(error, -EPROTONOSUPPORT, "not a zip archive (not a regular file)");

        /* An archive starts with its first local header, or is empty and only an EOCD. */
        if ((uint64_t) st.st_size < EOCD_SIZE || pread_exact(fd, magic, sizeof(magic), 0) < 0 ||
            (get32(magic) != SIG_LOCAL && get32(magic) != SIG_EOCD))
                return not_zip(fd, error);

        r = find_eocd(fd, st.st_size, &eocd_offset, eocd, error);
        if (r < 0)
                return r;
        if (eocd_offset >= ZIP64_LOCATOR_SIZE) {
                uint8_t sig[4];

                if (pread_exact(fd, sig, sizeof(sig), eocd_offset - ZIP64_LOCATOR_SIZE) >= 0 &&
                    get32(sig) == SIG_ZIP64_LOCATOR)
                        return error_setf(error, -EPROTONOSUPPORT, "zip64 archives are not supported");
        }
        if (get16(eocd + 4) != 0 || get16(eocd + 6) != 0 || get16(eocd + 8) != get16(eocd + 10))
                return error_setf(error, -EPROTONOSUPPORT, "multi-disk archives are not supported");

        total = get16(eocd + 10);
        cd_size = get32(eocd + 12);
        cd_offset = get32(eocd + 16);
        if (total == UINT16_MAX || cd_size == UINT32_MAX || cd_offset == UINT32_MAX)
                return error_setf(error, -EPROTONOSUPPORT, "zip64 archives are not supported");
        /* No data in front of the archive (self-extractors) and nothing between the central
         * directory and its end record, so every reader finds the same entries. */
        if (cd_offset + cd_size != eocd_offset)
                return error_setf(error, -EBADMSG,
                                  "corrupt zip archive: central directory is not where the end record says");

        z = calloc(1, sizeof(ZipDirectory));
        if (!z)
                return -ENOMEM;
        z->file_size = st.st_size;
        /* Room for one entry past the cap: it is read to be named in the refusal. */
        n_alloc = total <= limits->max_entries ? (size_t) total + 1 : (size_t) limits->max_entries + 1;
        z->entries = calloc(n_alloc, sizeof(ZipDirEntry));
        if (!z->entries)
                return -ENOMEM;

        pos = cd_offset;
        for (size_t i = 0; i < total; i++) {
                /* Counted before reading, so that a refused entry's name is freed with the rest. */
                z->n++;
                z->entries[i].index = i;
                r = read_central_entry(fd, &pos, eocd_offset, i, limits, &z->entries[i], error);
                if (r < 0)
                        return r;
                r = check_local_header(fd, &z->entries[i], cd_offset, error);
                if (r < 0)
                        return r;
        }
        if (pos != eocd_offset)
                return error_setf(error, -EBADMSG,
                                  "corrupt zip archive: central directory holds more than %u entries",
                                  total);

        r = check_overlaps(z, error);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(z);
        return 0;
}
