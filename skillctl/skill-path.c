/* See skill-path.h. */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "skill-path.h"

static int push_under(char ***l, const char *base, const char *sub) {
        char *p;

        if (isempty(base) || base[0] != '/')
                return 0;       /* an unset or relative $HOME or $XDG_DATA_HOME counts for nothing */
        p = strjoin_path(base, sub);
        return p ? strv_push(l, p) : -ENOMEM;
}

int skill_path_folders(char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        const char *override = getenv("SKILLCTL_SKILLS_PATH"), *home = getenv("HOME"),
                   *xdg = getenv("XDG_DATA_HOME");
        _cleanup_free_ char *cwd = NULL;
        int r;

        if (override) {
                _cleanup_free_ char *copy = strdup(override);
                char *state = NULL;

                if (!copy)
                        return -ENOMEM;
                for (char *f = strtok_r(copy, ":", &state); f; f = strtok_r(NULL, ":", &state)) {
                        r = strv_extend(&l, f);
                        if (r < 0)
                                return r;
                }
                if (!l && !(l = calloc(1, sizeof(char *))))
                        return -ENOMEM;
                *ret = TAKE_PTR(l);
                return 0;
        }

        /* The project's, as absolute paths: they stay right for whoever the list is handed to
         * (skillctl mcp's runs, a folder given to the service). */
        cwd = get_current_dir_name();
        if ((r = push_under(&l, cwd, ".claude/skills")) < 0 || (r = push_under(&l, cwd, ".agents/skills")) < 0)
                return r;
        if (!isempty(xdg) && xdg[0] == '/')
                r = push_under(&l, xdg, "skills");
        else
                r = push_under(&l, home, ".local/share/skills");
        if (r < 0)
                return r;
        if ((r = push_under(&l, home, ".claude/skills")) < 0 || (r = push_under(&l, home, ".agents/skills")) < 0)
                return r;
        /* No $HOME and no working directory: an empty list, not none. */
        if (!l && !(l = calloc(1, sizeof(char *))))
                return -ENOMEM;
        *ret = TAKE_PTR(l);
        return 0;
}

static bool name_is_folder_name(const char *name) {
        return !isempty(name) && !streq(name, ".") && !streq(name, "..") && !strchr(name, '/');
}

/* A skill folder: FOLDER/NAME/SKILL.md is there (the loader checks the rest). */
static bool has_skill(const char *folder, const char *name) {
        _cleanup_free_ char *md = NULL, *dir = strjoin_path(folder, name);
        struct stat st;

        if (!dir || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
                return false;
        md = strjoin_path(dir, "SKILL.md");
        return md && access(md, F_OK) >= 0;
}

int skill_path_find(const char *name, char **ret_path) {
        _cleanup_strv_free_ char **folders = NULL;
        int r;

        if (!name_is_folder_name(name))
                return -EINVAL;
        r = skill_path_folders(&folders);
        if (r < 0)
                return r;
        for (char **f = folders; *f; f++)
                if (has_skill(*f, name)) {
                        char *p = strjoin_path(*f, name);

                        if (!p)
                                return -ENOMEM;
                        *ret_path = p;
                        return 0;
                }
        return -ENOENT;
}

void skill_path_entries_free(SkillPathEntry *e, size_t n) {
        for (size_t i = 0; e && i < n; i++) {
                free(e[i].name);
                free(e[i].path);
                free(e[i].folder);
        }
        free(e);
}

static int entry_cmp(const void *a, const void *b) {
        return strcmp(((const SkillPathEntry *) a)->name, ((const SkillPathEntry *) b)->name);
}

static void closedirp(DIR **d) {
        if (*d)
                (void) closedir(*d);
}

typedef struct EntryList {
        SkillPathEntry *e;
        size_t n;
} EntryList;

static void entry_list_done(EntryList *l) {
        skill_path_entries_free(l->e, l->n);
}

static int entry_list_add(EntryList *l, const char *folder, const char *name) {
        SkillPathEntry *grown = reallocarray(l->e, l->n + 1, sizeof(SkillPathEntry));

        if (!grown)
                return -ENOMEM;
        l->e = grown;
        l->e[l->n++] = (SkillPathEntry) {
                .name = strdup(name),
                .path = strjoin_path(folder, name),
                .folder = strdup(folder),
        };
        return l->e[l->n - 1].name && l->e[l->n - 1].path && l->e[l->n - 1].folder ? 0 : -ENOMEM;
}

int skill_path_list(SkillPathEntry **ret, size_t *ret_n) {
        _cleanup_(entry_list_done) EntryList l = {};
        _cleanup_strv_free_ char **folders = NULL, **seen = NULL;
        int r;

        r = skill_path_folders(&folders);
        if (r < 0)
                return r;
        STRV_FOREACH(f, folders) {
                _cleanup_(closedirp) DIR *d = opendir(*f);
                struct dirent *de;

                if (!d)
                        continue;
                while ((de = readdir(d))) {
                        if (de->d_name[0] == '.' || strv_contains(seen, de->d_name) || !has_skill(*f, de->d_name))
                                continue;
                        r = entry_list_add(&l, *f, de->d_name);
                        if (r < 0)
                                return r;
                        r = strv_extend(&seen, de->d_name);
                        if (r < 0)
                                return r;
                }
        }
        if (l.n > 0)
                qsort(l.e, l.n, sizeof(SkillPathEntry), entry_cmp);
        *ret = TAKE_PTR(l.e);
        *ret_n = l.n;
        l.n = 0;
        return 0;
}
