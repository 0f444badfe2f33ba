/* Building the archives the loader tests feed it. Well-formed ones come from libarchive's
 * writers; the hostile ones libarchive will not write (NUL bytes in names, devices and FIFOs,
 * lying sizes, names that differ between headers) are put together byte by byte here, with
 * libarchive's gzip filter lending its deflate stream and CRC. */
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <sys/mman.h>

#include "test-util.h"

typedef struct Bytes {
        uint8_t *p;
        size_t n, alloc;
} Bytes;

static inline void bytes_done(Bytes *b) {
        free(b->p);
        *b = (Bytes) {};
}
#define _cleanup_bytes_ _cleanup_(bytes_done)

static inline void bytes_put(Bytes *b, const void *d, size_t n) {
        if (b->n + n > b->alloc) {
                b->alloc = (b->n + n) * 2 + 64;
                b->p = realloc(b->p, b->alloc);
                ck_assert_ptr_nonnull(b->p);
        }
        if (n > 0)
                memcpy(b->p + b->n, d, n);
        b->n += n;
}

static inline void bytes_u16(Bytes *b, uint16_t v) {
        uint8_t c[2] = { v & 0xff, v >> 8 };
        bytes_put(b, c, 2);
}

static inline void bytes_u32(Bytes *b, uint32_t v) {
        uint8_t c[4] = { v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24 };
        bytes_put(b, c, 4);
}

static inline uint32_t le32(const uint8_t *p) {
        return (uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16) | ((uint32_t) p[3] << 24);
}

/* A memfd holding the bytes, offset at 0. */
static inline int bytes_memfd(const Bytes *b) {
        int fd = memfd_create("archive", MFD_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(loop_write(fd, b->p, b->n), 0);
        ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
        return fd;
}

static inline void bytes_write_file(int dir_fd, const char *path, const Bytes *b) {
        _cleanup_close_ int fd = openat(dir_fd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(loop_write(fd, b->p, b->n), 0);
}

/* Raw deflate of data, and its CRC-32, taken out of a gzip stream libarchive writes. */
static inline void test_deflate(const void *data, size_t n, Bytes *ret, uint32_t *ret_crc) {
        struct archive *a = archive_write_new();
        struct archive_entry *e = archive_entry_new();
        size_t cap = n + n / 100 + 4096, used = 0, p = 10;
        uint8_t *gz = malloc(cap), flags;

        ck_assert_ptr_nonnull(gz);
        ck_assert_int_eq(archive_write_set_format_raw(a), ARCHIVE_OK);
        ck_assert_int_eq(archive_write_add_filter_gzip(a), ARCHIVE_OK);
        ck_assert_int_eq(archive_write_set_bytes_in_last_block(a, 1), ARCHIVE_OK);
        ck_assert_int_eq(archive_write_open_memory(a, gz, cap, &used), ARCHIVE_OK);
        archive_entry_set_pathname(e, "x");
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_size(e, n);
        ck_assert_int_eq(archive_write_header(a, e), ARCHIVE_OK);
        ck_assert_int_eq(archive_write_data(a, data, n), (la_ssize_t) n);
        ck_assert_int_eq(archive_write_close(a), ARCHIVE_OK);
        archive_write_free(a);
        archive_entry_free(e);

        ck_assert_uint_ge(used, 18);
        ck_assert(gz[0] == 0x1f && gz[1] == 0x8b && gz[2] == 8);
        flags = gz[3];
        if (flags & 4)
                p += 2 + (gz[p] | (gz[p + 1] << 8));
        if (flags & 8)
                while (gz[p++] != 0)
                        ;
        if (flags & 16)
                while (gz[p++] != 0)
                        ;
        if (flags & 2)
                p += 2;
        ck_assert_uint_eq(le32(gz + used - 4), (uint32_t) n);
        *ret_crc = le32(gz + used - 8);
        *ret = (Bytes) {};
        bytes_put(ret, gz + p, used - 8 - p);
        free(gz);
}

static inline uint32_t test_crc32(const void *data, size_t n) {
        const uint8_t *p = data;
        uint32_t c = 0xffffffffU;

        for (size_t i = 0; i < n; i++) {
                c ^= p[i];
                for (int k = 0; k < 8; k++)
                        c = (c >> 1) ^ (0xedb88320U & -(c & 1));
        }
        return ~c;
}

/* One entry of a hand-built zip. */
typedef struct ZipSpec {
        const char *name;
        size_t name_len;                /* 0: strlen(name); set it for names holding NUL */
        const char *local_name;         /* name in the local header; NULL: the same */
        size_t local_name_len;          /* 0: strlen(local_name) */
        uint32_t mode;                  /* Unix st_mode, made by host Unix; 0: made by MS-DOS */
        const void *data;
        size_t size;
        bool deflate;
        bool lie_size;                  /* declare declared_size instead of the real size */
        uint32_t declared_size;
        uint16_t flags;                 /* general purpose flags besides UTF-8 */
        uint16_t method;                /* forced compression method; 0: from deflate */
        uint32_t central_csize;         /* compressed size the central directory claims; 0: real */
} ZipSpec;

static inline void zip_build(const ZipSpec *specs, size_t n, Bytes *out) {
        _cleanup_bytes_ Bytes cd = {};

        *out = (Bytes) {};
        for (size_t i = 0; i < n; i++) {
                const ZipSpec *s = &specs[i];
                _cleanup_bytes_ Bytes packed = {};
                size_t name_len = s->name_len ?: strlen(s->name);
                const char *local = s->local_name ?: s->name;
                size_t local_len = !s->local_name ? name_len : s->local_name_len ?: strlen(s->local_name);
                uint16_t method = s->method ?: s->deflate ? 8 : 0;
                uint16_t flags = (1U << 11) | s->flags;
                uint16_t made_by = s->mode ? (3U << 8) | 20 : 20;
                uint32_t offset = out->n, crc, usize;

                if (s->deflate)
                        test_deflate(s->data, s->size, &packed, &crc);
                else {
                        bytes_put(&packed, s->data, s->size);
                        crc = test_crc32(s->data, s->size);
                }
                usize = s->lie_size ? s->declared_size : (uint32_t) s->size;

                bytes_u32(out, 0x04034b50);
                bytes_u16(out, 20);
                bytes_u16(out, flags);
                bytes_u16(out, method);
                bytes_u16(out, 0);              /* time */
                bytes_u16(out, 0x21);           /* date: 1980-01-01 */
                bytes_u32(out, crc);
                bytes_u32(out, packed.n);
                bytes_u32(out, usize);
                bytes_u16(out, local_len);
                bytes_u16(out, 0);
                bytes_put(out, local, local_len);
                bytes_put(out, packed.p, packed.n);

                bytes_u32(&cd, 0x02014b50);
                bytes_u16(&cd, made_by);
                bytes_u16(&cd, 20);
                bytes_u16(&cd, flags);
                bytes_u16(&cd, method);
                bytes_u16(&cd, 0);
                bytes_u16(&cd, 0x21);
                bytes_u32(&cd, crc);
                bytes_u32(&cd, s->central_csize ?: packed.n);
                bytes_u32(&cd, usize);
                bytes_u16(&cd, name_len);
                bytes_u16(&cd, 0);              /* extra */
                bytes_u16(&cd, 0);              /* comment */
                bytes_u16(&cd, 0);              /* disk */
                bytes_u16(&cd, 0);              /* internal attributes */
                if (s->mode)
                        bytes_u32(&cd, s->mode << 16);  /* Unix mode in the high half */
                else
                        bytes_u32(&cd, name_len > 0 && s->name[name_len - 1] == '/' ? 0x10 : 0);
                bytes_u32(&cd, offset);
                bytes_put(&cd, s->name, name_len);
        }

        uint32_t cd_offset = out->n;
        bytes_put(out, cd.p, cd.n);
        bytes_u32(out, 0x06054b50);
        bytes_u16(out, 0);
        bytes_u16(out, 0);
        bytes_u16(out, n);
        bytes_u16(out, n);
        bytes_u32(out, cd.n);
        bytes_u32(out, cd_offset);
        bytes_u16(out, 0);
}

/* One entry of an archive libarchive writes. */
typedef struct ArSpec {
        const char *path;
        mode_t type;            /* AE_IFREG, AE_IFDIR, AE_IFLNK */
        mode_t perm;
        const char *data;       /* contents, or the target of a link */
        bool hardlink;          /* data names the entry this one is a hard link to */
} ArSpec;

/* format and filter: ARCHIVE_FORMAT_* and ARCHIVE_FILTER_* codes. */
static inline void ar_build(int format, int filter, const ArSpec *specs, size_t n, Bytes *out) {
        struct archive *a = archive_write_new();
        size_t cap = 1024 * 1024, used = 0;

        *out = (Bytes) {};
        out->p = malloc(cap);
        ck_assert_ptr_nonnull(out->p);
        out->alloc = cap;
        ck_assert_int_eq(archive_write_set_format(a, format), ARCHIVE_OK);
        ck_assert_int_eq(archive_write_add_filter(a, filter), ARCHIVE_OK);
        ck_assert_int_eq(archive_write_set_bytes_in_last_block(a, 1), ARCHIVE_OK);
        ck_assert_int_eq(archive_write_open_memory(a, out->p, cap, &used), ARCHIVE_OK);
        for (size_t i = 0; i < n; i++) {
                struct archive_entry *e = archive_entry_new();
                const ArSpec *s = &specs[i];
                bool contents = s->type == AE_IFREG && !s->hardlink && s->data;

                archive_entry_set_pathname(e, s->path);
                archive_entry_set_filetype(e, s->type);
                archive_entry_set_perm(e, s->perm ?: 0644);
                archive_entry_set_mtime(e, 1700000000, 0);
                if (s->type == AE_IFLNK)
                        archive_entry_set_symlink(e, s->data);
                if (s->hardlink)
                        archive_entry_set_hardlink(e, s->data);
                archive_entry_set_size(e, contents ? strlen(s->data) : 0);
                ck_assert_int_eq(archive_write_header(a, e), ARCHIVE_OK);
                if (contents)
                        ck_assert_int_eq(archive_write_data(a, s->data, strlen(s->data)),
                                         (la_ssize_t) strlen(s->data));
                archive_entry_free(e);
        }
        ck_assert_int_eq(archive_write_close(a), ARCHIVE_OK);
        archive_write_free(a);
        out->n = used;
}
