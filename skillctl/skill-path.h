/* The user's skill folders: where skillctl finds a skill by name without the service, as agents
 * keep them. In order, the first match wins:
 *
 *   ./.claude/skills  ./.agents/skills        the project's (the current directory's)
 *   $XDG_DATA_HOME/skills                     (default ~/.local/share/skills)
 *   ~/.claude/skills  ~/.agents/skills        the user's
 *
 * $SKILLCTL_SKILLS_PATH (folders separated by ':') replaces the whole list; set empty, it turns
 * the search off. A skill in a folder is a subfolder NAME/ holding SKILL.md. Nothing here loads or
 * validates a skill (the loader does, when it is run or linted); this only finds folders. */
#pragma once

#include "util.h"

typedef struct SkillPathEntry {
        char *name;                     /* the subfolder's name */
        char *path;                     /* FOLDER/NAME */
        char *folder;                   /* which skill folder it came from */
} SkillPathEntry;

/* The folders searched, in order, whether they exist or not. */
int skill_path_folders(char ***ret);

/* Finds skill NAME in the folders: ret_path gets FOLDER/NAME. -ENOENT when none has it, -EINVAL
 * when NAME could not be a folder's name (empty, '.', '..', holding '/'). */
int skill_path_find(const char *name, char **ret_path);

/* Every skill of every folder, sorted by name, the first folder's one where names repeat (the
 * others are shadowed and left out). Folders that do not exist or cannot be read are skipped. */
int skill_path_list(SkillPathEntry **ret, size_t *ret_n);
void skill_path_entries_free(SkillPathEntry *e, size_t n);
