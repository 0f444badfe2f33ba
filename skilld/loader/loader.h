/* Loading skills safely: the first security boundary. A skill arrives as a directory, a `.skill`
 * zip with one top-level <name>/ folder, or a flat zip, from an untrusted user. Whatever it holds,
 * the loader produces a plain tree of regular files and directories (modes 0644/0755) or a clear
 * error naming the offending entry, and never writes outside its target.
 *
 * Errors: -EINVAL for a bad name (absolute, "..", control characters, invalid UTF-8, too long or
 * too deep), -EPERM for an entry kind that is not allowed (symlink, hard link, device, FIFO,
 * socket, mount point), -EEXIST for duplicate names and file/directory conflicts, -E2BIG for too
 * many entries, -EFBIG for too many bytes or too high a compression ratio, -EPROTONOSUPPORT for
 * something that is not a plain zip (another format, zip64, encryption, an unusual compression
 * method), -EBADMSG for a corrupt or self-contradicting zip. */
#pragma once

#include <sys/types.h>

#include "util.h"

typedef struct LoaderLimits {
        uint64_t max_entries;           /* zip entries, and files + directories made; default 10,000 */
        uint64_t max_total_bytes;       /* uncompressed, counted as read; default 256 MiB */
        uint64_t max_file_bytes;        /* default = max_total_bytes */
        uint64_t max_ratio;             /* uncompressed/archive size; default 200, UINT64_MAX: none */
        uint64_t ratio_min_bytes;       /* the ratio is checked once this much was read; default 1 MiB */
        unsigned max_depth;             /* path components, default 32 */
        size_t max_path;                /* bytes, default 1024 */
} LoaderLimits;

#define LOADER_LIMITS_DEFAULT                                   \
        (LoaderLimits) {                                        \
                .max_entries = 10000,                           \
                .max_total_bytes = 256ULL * 1024 * 1024,        \
                .max_file_bytes = 256ULL * 1024 * 1024,         \
                .max_ratio = 200,                               \
                .ratio_min_bytes = 1024ULL * 1024,              \
                .max_depth = 32,                                \
                .max_path = 1024,                               \
        }

/* Checks one relative path against the rules shared by archives and directories: no absolute
 * paths, "..", ".", empty components, backslashes, control characters, invalid UTF-8, over-long
 * paths or too deep nesting. limits may be NULL for the defaults. */
int loader_check_path(const char *path, const LoaderLimits *limits, char **error);

/* Extracts the zip read from archive_fd into the empty directory target_fd. With a single
 * top-level folder holding SKILL.md, that folder's contents land at the target root and
 * *ret_top_name (optional) is set to its name; with a flat zip it is set to NULL. The archive is
 * read with pread(), its file offset is left alone. On failure the target is emptied again. */
int loader_extract_zip(int archive_fd, int target_fd, const LoaderLimits *limits, char **ret_top_name,
                       char **error);

/* Validates a directory given as a skill with the same rules: names, no symlinks at all, no hard
 * links, devices, FIFOs, sockets or mount points, and the caps on depth, entries and sizes (as
 * given by st_size). Excluded paths (see skill_path_is_excluded()) are checked too: they are
 * still part of the tree the sandbox sees. */
int loader_check_tree(int dir_fd, const LoaderLimits *limits, char **error);

/* A loaded skill: a directory fd on a validated tree. If the source was an archive, the tree is a
 * private temporary directory that skill_source_free() removes. */
typedef struct SkillSource {
        int dir_fd;
        char *path;             /* the directory on disk (the temporary one for archives); for a
                                 * directory fd, where /proc says it is, or NULL */
        char *dir_name;         /* the folder name the skill name must equal, NULL if unknown */
        char *temp_dir;         /* the private 0700 directory holding path, removed on free */
        bool temporary;
        bool from_archive;
        struct TreeList *tree;  /* a directory's entries as validated, sorted; NULL for archives */
} SkillSource;

SkillSource *skill_source_free(SkillSource *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(SkillSource *, skill_source_free);

/* Opens path: a directory is validated in place, a regular file must be a zip and is extracted
 * into a new temporary directory (under $TMPDIR or /tmp). limits may be NULL for the defaults. */
int skill_source_open(const char *path, const LoaderLimits *limits, SkillSource **ret, char **error);
/* The same from an already open fd (a zip file, a memfd, or a directory fd; fd is not taken);
 * name_hint (may be NULL) names the source and gives the folder name for flat zips and for
 * directories. */
int skill_source_open_fd(int fd, const char *name_hint, const LoaderLimits *limits, SkillSource **ret,
                         char **error);

/* SHA-256 over a canonical walk of the tree: paths sorted bytewise, each entry hashed with its
 * kind, normalized mode (0644/0755 for files, dir) and contents, so the same tree hashes the same
 * whether it came from a directory or an archive. Excluded paths are left out, as packaging does,
 * and the sandbox hides them from runs: the hash names everything a run can execute. */
int skill_tree_hash(int dir_fd, char ret_hex[static 65], char **error);
/* The same hash of a source: for a directory, over the entries its validation listed, so the tree
 * is walked once for both (the files are still opened and read now, each refusing any symlink on
 * its path); for an archive's private tree, skill_tree_hash() of it. */
int skill_source_hash(const SkillSource *s, char ret_hex[static 65], char **error);

/* Writes a .skill zip of the tree at dir_fd into out_fd, every entry under "<name>/", sorted,
 * directories included, deflated, with a fixed mtime ($SOURCE_DATE_EPOCH if set, else
 * 1980-01-02), leaving out __pycache__, *.pyc and .DS_Store (a vendored node_modules is kept, under
 * the loader's caps like everything else). */
int skill_package(int dir_fd, const char *name, int out_fd, char **error);

/* Writes a zip of the folder's contents (entries at the root, sorted, directories included) into
 * out_fd: a folder input of a run (--file NAME=DIR), read back with loader_extract_zip(). Nothing
 * is left out; symlinks, hard links, devices, FIFOs and sockets are refused with the entry's name,
 * as are trees beyond limits (NULL: the defaults). */
int loader_package_folder(int dir_fd, const LoaderLimits *limits, int out_fd, char **error);
/* Extracts such a zip with loader_extract_zip()'s rules, except that a single top-level folder is
 * kept as it is (it is data, not a skill). Returns the bytes and the files and directories made. */
int loader_extract_folder_zip(int archive_fd, int target_fd, const LoaderLimits *limits, uint64_t *ret_bytes,
                              uint64_t *ret_entries, char **error);

/* Whether a relative path is one packaging and hashing leave out: any component that is
 * __pycache__ or .DS_Store, or ends in .pyc. Compiled Python is a cache of the source that is
 * hashed, never a part of the skill: Python would run a planted .pyc instead of its source. */
bool skill_path_is_excluded(const char *path);

/* The excluded paths present under dir_fd, top-most only (a __pycache__ folder, not what it
 * holds), sorted: folders in *ret_dirs, files in *ret_files. The sandbox hides each of them, so
 * that nothing left out of the hash can run. Either list may come back NULL (none). */
int skill_list_excluded(int dir_fd, char ***ret_dirs, char ***ret_files, char **error);
/* The same for a source, from the list its validation made (no second walk) where it has one. */
int skill_source_list_excluded(const SkillSource *s, char ***ret_dirs, char ***ret_files, char **error);
