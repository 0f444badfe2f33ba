/* The content hash that identifies a skill, and that every result will carry. It is taken over
 * the tree as it would be packaged (excluded paths left out), in a canonical form independent of
 * where the tree came from, its owners, times and directory order:
 *
 *   "skilld-tree-v1\n"
 *   for each entry, sorted bytewise by relative path:
 *     'd' or 'f', the path length as u32 little endian, the path bytes,
 *     and for files: the normalized mode (0644 or 0755) as u32 little endian, the size as u64
 *     little endian and the SHA-256 of the contents as 64 lowercase hex digits.
 *
 * Every variable-length field is length-prefixed, so no two trees feed the same bytes. */
#include "error.h"
#include "hash.h"
#include "loader-internal.h"

#define TREE_HASH_MAGIC "skilld-tree-v1\n"

static void put_u32(uint8_t *p, uint32_t v) {
        for (unsigned i = 0; i < 4; i++)
                p[i] = (uint8_t) (v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v) {
        for (unsigned i = 0; i < 8; i++)
                p[i] = (uint8_t) (v >> (8 * i));
}

static int hash_entry(Sha256 *h, int dir_fd, const TreeEntry *e, char **error) {
        char content_hex[SHA256_HEX_SIZE];
        uint8_t kind = S_ISDIR(e->type) ? 'd' : 'f', len[4], mode[4], size[8];
        size_t path_len = strlen(e->path);
        uint64_t n;
        int r;

        put_u32(len, (uint32_t) path_len);
        r = sha256_update(h, &kind, 1);
        if (r >= 0)
                r = sha256_update(h, len, sizeof(len));
        if (r >= 0)
                r = sha256_update(h, e->path, path_len);
        if (r < 0 || S_ISDIR(e->type))
                return r;

        {
                _cleanup_close_ int fd = tree_open_file(dir_fd, e->path, error);

                if (fd < 0)
                        return fd;
                r = sha256_fd(fd, content_hex, &n);
                if (r < 0)
                        return loader_entry_error(error, r, e->path, "cannot read: %s", strerror(-r));
        }
        put_u32(mode, e->mode);
        put_u64(size, n);
        r = sha256_update(h, mode, sizeof(mode));
        if (r >= 0)
                r = sha256_update(h, size, sizeof(size));
        if (r >= 0)
                r = sha256_update(h, content_hex, SHA256_HEX_SIZE - 1);
        return r;
}

/* The hash identifies trees; it does not judge them (the loader did). The bounds only keep the
 * walk finite. */
static const LoaderLimits walk_limits = {
        .max_entries = UINT64_MAX,
        .max_total_bytes = UINT64_MAX,
        .max_file_bytes = UINT64_MAX,
        .max_depth = 256,
        .max_path = PATH_MAX,
};

/* The excluded paths of a sorted list, top-most only. */
static int list_excluded(const TreeList *list, char ***ret_dirs, char ***ret_files) {
        _cleanup_strv_free_ char **dirs = NULL, **files = NULL;
        const char *hidden = NULL;      /* the last folder listed: what is below it is hidden with it */
        int r;

        for (size_t i = 0; i < list->n; i++) {
                const TreeEntry *e = &list->entries[i];
                const char *rest;

                if (hidden && (rest = startswith(e->path, hidden)) && rest[0] == '/')
                        continue;
                if (!skill_path_is_excluded(e->path))
                        continue;
                r = strv_extend(S_ISDIR(e->type) ? &dirs : &files, e->path);
                if (r < 0)
                        return r;
                if (S_ISDIR(e->type))
                        hidden = e->path;
        }
        *ret_dirs = TAKE_PTR(dirs);
        *ret_files = TAKE_PTR(files);
        return 0;
}

int skill_list_excluded(int dir_fd, char ***ret_dirs, char ***ret_files, char **error) {
        _cleanup_tree_list_ TreeList list = {};
        int r;

        r = tree_walk(dir_fd, &walk_limits, TREE_WALK_SORT, &list, error);
        if (r < 0)
                return r;
        return list_excluded(&list, ret_dirs, ret_files);
}

int skill_source_list_excluded(const SkillSource *s, char ***ret_dirs, char ***ret_files, char **error) {
        /* The validation walk listed everything, excluded paths included, sorted. */
        if (!s->tree)
                return skill_list_excluded(s->dir_fd, ret_dirs, ret_files, error);
        return list_excluded(s->tree, ret_dirs, ret_files);
}

/* Hashes the entries of list (sorted) that are not excluded. */
static int hash_list(int dir_fd, const TreeList *list, char ret_hex[static 65], char **error) {
        _cleanup_(sha256_freep) Sha256 *h = NULL;
        char hex[SHA256_HEX_SIZE];
        int r;

        r = sha256_new(&h);
        if (r >= 0)
                r = sha256_update(h, TREE_HASH_MAGIC, strlen(TREE_HASH_MAGIC));
        for (size_t i = 0; r >= 0 && i < list->n; i++)
                if (!skill_path_is_excluded(list->entries[i].path))
                        r = hash_entry(h, dir_fd, &list->entries[i], error);
        if (r >= 0)
                r = sha256_final_hex(h, hex);
        if (r < 0)
                return error_setf(error, r, "cannot hash the skill: %s", strerror(-r));

        memcpy(ret_hex, hex, SHA256_HEX_SIZE);
        return 0;
}

int skill_tree_hash(int dir_fd, char ret_hex[static 65], char **error) {
        _cleanup_tree_list_ TreeList list = {};
        int r;

        r = tree_walk(dir_fd, &walk_limits, TREE_WALK_SKIP_EXCLUDED | TREE_WALK_SORT, &list, error);
        if (r < 0)
                return r;
        return hash_list(dir_fd, &list, ret_hex, error);
}

int skill_source_hash(const SkillSource *s, char ret_hex[static 65], char **error) {
        /* The validation walk listed excluded paths too (they are checked like the rest);
         * hash_list() leaves them out, as the skipping walk does. */
        if (!s->tree)
                return skill_tree_hash(s->dir_fd, ret_hex, error);
        return hash_list(s->dir_fd, s->tree, ret_hex, error);
}
