/* A zip's central directory read by hand, byte for byte, before libarchive sees the archive.
 * libarchive hides some of what matters here (it cuts names at a NUL byte, turns FIFOs into
 * regular files, converts names through the locale), so the exact names, kinds, methods and
 * offsets are taken from the bytes themselves and libarchive's view is checked against them. */
#pragma once

#include "loader.h"

typedef struct ZipDirEntry {
        char *name;             /* exactly as stored, NUL-terminated (names holding NUL are refused) */
        size_t name_len;
        bool is_dir;
        uint16_t method;
        uint64_t offset;        /* of the local header */
        uint64_t data_end;      /* end of the compressed data */
        uint64_t compressed_size;
        uint64_t size;          /* as declared; never trusted for limits */

        size_t index;           /* position in the central directory */

        /* Filled in by the extractor. */
        char *path;             /* name without the trailing slash */
        const char *dest;       /* path below the target: path without the top folder */
        bool seen;
} ZipDirEntry;

typedef struct ZipDirectory {
        ZipDirEntry *entries;
        size_t n;
        uint64_t file_size;
} ZipDirectory;

ZipDirectory *zip_directory_free(ZipDirectory *z);
DEFINE_TRIVIAL_CLEANUP_FUNC(ZipDirectory *, zip_directory_free);

/* Reads the central directory of the zip in fd (with pread(), leaving the offset alone). Refuses
 * what is not a plain single-disk, non-zip64, unencrypted zip using stored or deflate entries,
 * entries whose local header disagrees with the central directory or that overlap, more entries
 * than limits->max_entries, names with NUL bytes or beyond the length bounds, and Unix modes
 * other than regular files and directories. */
int zip_directory_read(int fd, const LoaderLimits *limits, ZipDirectory **ret, char **error);
