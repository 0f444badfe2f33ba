/* The skill model: what a SKILL.md says about a skill. The frontmatter is parsed leniently, as
 * the Agent Skills client guide asks (unknown keys are kept, odd values are recorded rather than
 * fatal); strictness lives in lint.h. Nothing here touches the file system beyond reading the
 * SKILL.md it is handed, and nothing here knows about D-Bus. */
#pragma once

#include "util.h"

/* The frontmatter is small by nature; anything larger is refused before parsing. */
#define SKILL_FRONTMATTER_MAX (64U * 1024U)
/* SKILL.md as a whole (frontmatter plus Markdown body). */
#define SKILL_MD_MAX (1024U * 1024U)

/* One top-level frontmatter key as found, with the line it stood on (1-based, in SKILL.md). */
typedef struct SkillField {
        char *key;
        char *value;            /* scalar value, or NULL when the value is a sequence or mapping */
        unsigned line;
        bool is_scalar;
} SkillField;

typedef struct Skill {
        char *md_filename;      /* "SKILL.md" or "skill.md" */

        char *name;
        char *description;
        char *license;
        char *compatibility;
        char *allowed_tools;    /* space-separated, as the spec writes it; a YAML list is joined */
        char *entry_point;      /* non-standard but common: "entry_point" */
        char **metadata;        /* key, value, key, value, ... (strings only; see lint) */

        SkillField *fields;     /* every top-level key, known or not, in file order */
        size_t n_fields;

        char *body;             /* the Markdown after the frontmatter */
        unsigned body_line;     /* line where the body starts */
} Skill;

Skill *skill_free(Skill *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Skill *, skill_free);

/* Parses SKILL.md text. Fails (with a message naming the file and line) only when there is no
 * frontmatter, it is not a YAML mapping, it is too large or hostile (aliases, tags, deep
 * nesting, invalid UTF-8). */
int skill_parse_markdown(const char *text, size_t size, const char *filename, Skill **ret, char **error);

/* Finds SKILL.md (or skill.md) in the skill root dir_fd and parses it. */
int skill_load_at(int dir_fd, Skill **ret, char **error);

/* The field with that key, or NULL. */
const SkillField *skill_get_field(const Skill *s, const char *key);

/* Whether a key is one the specification defines (name, description, license, ...). */
bool skill_key_is_known(const char *key);
