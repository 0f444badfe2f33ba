/* Which script of a skill runs, and with which interpreter. Resolution order: an explicit
 * --script; the frontmatter entry_point; scripts/main.{py,js,mjs,sh}; scripts/run.py, main.py,
 * run.py; the only script in scripts/; otherwise an error listing the scripts found. */
#pragma once

#include "skill.h"

typedef enum Interpreter {
        INTERPRETER_NONE,       /* executed directly (a shebang we do not map, or a binary) */
        INTERPRETER_PYTHON,
        INTERPRETER_NODE,
        INTERPRETER_BASH,
        INTERPRETER_SH,
        _INTERPRETER_MAX,
        _INTERPRETER_INVALID = -EINVAL,
} Interpreter;

typedef struct SkillEntry {
        char *script;           /* relative to the skill root, e.g. "scripts/main.py" */
        Interpreter interpreter;
        const char *how;        /* why this one: "--script", "entry_point", "scripts/main.py", ... */
} SkillEntry;

void skill_entry_done(SkillEntry *e);

/* script_override: the --script value, or NULL. -ENOENT with a message listing the scripts
 * found when nothing resolves; -EINVAL for a path that leaves the skill. */
int skill_resolve_entry(const Skill *s, int dir_fd, const char *script_override, SkillEntry *ret, char **error);

/* Interpreter from the extension, else from a shebang line read from the file. */
Interpreter interpreter_for_script(int dir_fd, const char *script);

const char *interpreter_to_string(Interpreter i);   /* "python3", "node", "bash", "sh", "exec" */
/* The program path used to run it, e.g. "/usr/bin/python3"; NULL for INTERPRETER_NONE. */
const char *interpreter_path(Interpreter i);

/* Lists every script (by extension or executable bit) under scripts/ and the root, sorted. */
int skill_list_scripts(int dir_fd, char ***ret);
