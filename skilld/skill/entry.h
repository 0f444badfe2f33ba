/* Which script of a skill runs, and with which interpreter. Resolution order: an explicit
 * --script; the frontmatter entry_point; scripts/main.{py,js,mjs,sh}; scripts/run.py, main.py,
 * run.py; the only script directly in scripts/; otherwise an error listing the scripts found.
 *
 * Everything is resolved under the skill's directory fd, one path component at a time with
 * O_NOFOLLOW, so neither a hostile --script/entry_point nor a symlink in the tree can pick a file
 * outside the skill; the chosen script must be a regular file. */
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
        char *script;           /* relative to the skill root, normalized, e.g. "scripts/main.py" */
        Interpreter interpreter;
        const char *how;        /* why this one: "--script", "entry_point", "scripts/main.py", ...,
                                 * "only script in scripts/" (static strings) */
} SkillEntry;

void skill_entry_done(SkillEntry *e);

/* s may be NULL (no entry_point then); script_override is the --script value, or NULL.
 * Errors, each with a message naming the path:
 *   -ENOENT  an override or entry_point naming a missing file; or nothing resolves (the message
 *            lists the scripts found, or says there are none)
 *   -EINVAL  a path that is empty, absolute or holds ".." (it would leave the skill)
 *   -ELOOP   a symlink on the way
 *   -EBADFD  not a regular file (a directory, FIFO, ...)
 * ret is untouched on failure. */
int skill_resolve_entry(const Skill *s, int dir_fd, const char *script_override, SkillEntry *ret,
                        char **error);
/* The same, with messages (and ret->how) naming the override as override_name, a static string:
 * skillctl's "--script", the D-Bus API's "the script argument". */
int skill_resolve_entry_named(const Skill *s, int dir_fd, const char *script_override,
                              const char *override_name, SkillEntry *ret, char **error);

/* Interpreter from the extension (.py python3, .js/.mjs/.cjs node, .sh bash), else from the
 * shebang line of the file (env and its options are looked through), else INTERPRETER_NONE.
 * Returns a negative errno if the script has no known extension and cannot be opened safely. */
Interpreter interpreter_for_script(int dir_fd, const char *script);

const char *interpreter_to_string(Interpreter i);   /* "python3", "node", "bash", "sh", "exec" */
/* The program path used to run it, e.g. "/usr/bin/python3"; NULL for INTERPRETER_NONE. */
const char *interpreter_path(Interpreter i);

/* Lists every script (a known extension, the executable bit or a "#!" line) directly in the
 * skill root and anywhere under scripts/ (not in __pycache__, node_modules or hidden folders),
 * as sorted paths relative to the root. Symlinks and special files are not scripts; scripts/
 * itself being a symlink is -ELOOP. A skill without scripts yields an empty list. */
int skill_list_scripts(int dir_fd, char ***ret);
