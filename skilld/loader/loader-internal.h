/* What the loader's files share but do not export: entry-naming error messages, the path rules
 * with explicit bounds, and the canonical tree walk behind hashing and packaging. */
#pragma once

#include <locale.h>
#include <sys/stat.h>

#include "loader.h"

/* A component can never be longer than this on Linux file systems. */
#define LOADER_NAME_MAX 255U

/* Sets "<name>: <message>" with name escaped (and shortened if long), so a hostile entry name
 * cannot forge terminal output. Returns -abs(r). */
int loader_entry_error(char **error, int r, const char *name, const char *fmt, ...) _printf_(4, 5);
/* The same for a name of len bytes that may hold NUL bytes (shown as \x00). */
int loader_entry_errorn(char **error, int r, const char *name, size_t len,
                        const char *fmt, ...) _printf_(5, 6);

/* loader_check_path() with explicit bounds; messages name display (the entry as the archive or
 * directory spells it), which may differ from path. */
int loader_check_path_bounded(const char *path, unsigned max_depth, size_t max_path, const char *display,
                              char **error);

/* The message for an entry kind that is not a regular file or directory (st_mode format bits). */
const char *loader_kind_refusal(mode_t type);

/* Normalized modes: directories 0755, files 0755 if any execute bit is set, else 0644. */
static inline mode_t loader_normalize_mode(mode_t mode) {
        if (S_ISDIR(mode))
                return 0755;
        return (mode & 0111) ? 0755 : 0644;
}

/* Removes everything below dir_fd, leaving it empty. */
int loader_empty_directory(int dir_fd);
/* 1 if dir_fd has no entries, 0 if it has some, negative errno on failure. */
int loader_directory_is_empty(int dir_fd);

/* One entry of a walked tree: its relative path, S_IFREG or S_IFDIR, normalized mode, size. */
typedef struct TreeEntry {
        char *path;
        mode_t type;
        mode_t mode;
        uint64_t size;
} TreeEntry;

typedef enum TreeWalkFlags {
        TREE_WALK_SKIP_EXCLUDED = 1 << 0,       /* leave out what skill_path_is_excluded() names */
        TREE_WALK_REFUSE_HARDLINKS = 1 << 1,    /* regular files with more than one link */
        TREE_WALK_SORT = 1 << 2,                /* sort bytewise by path */
} TreeWalkFlags;

typedef struct TreeList {
        TreeEntry *entries;
        size_t n;
} TreeList;

void tree_list_done(TreeList *l);
#define _cleanup_tree_list_ _cleanup_(tree_list_done)

/* Walks the tree below dir_fd without following any link, applying the path rules and caps of
 * limits (NULL: the defaults) and refusing anything but regular files and directories. */
int tree_walk(int dir_fd, const LoaderLimits *limits, TreeWalkFlags flags, TreeList *ret, char **error);

/* Opens a regular file at a relative path below dir_fd, refusing to pass through any symlink (and,
 * where openat2() is offered, to cross a mount point): one system call instead of one per component. */
int tree_open_file(int dir_fd, const char *path, char **error);

/* libarchive converts entry names between UTF-8 and the locale's character set, and in the C
 * locale a UTF-8 name "cannot be converted". While reading or writing an archive, this thread
 * uses C.UTF-8 whatever the process locale is; names are then passed through as bytes. */
typedef struct LoaderLocale {
        locale_t utf8;
        locale_t saved;
} LoaderLocale;

void loader_locale_enter(LoaderLocale *l);
void loader_locale_leave(LoaderLocale *l);
#define _cleanup_loader_locale_ _cleanup_(loader_locale_leave)
