/* The skill model: what a SKILL.md says about a skill. The frontmatter is parsed leniently, as
 * the Agent Skills client guide asks (unknown keys are kept, odd values are recorded rather than
 * fatal); strictness lives in lint.h. Nothing here touches the file system beyond reading the
 * SKILL.md it is handed, and nothing here knows about D-Bus.
 *
 * The frontmatter comes from untrusted users, so the YAML is read as a stream of libyaml events
 * (never through the document loader) and anything that could make a parser hang, recurse or
 * balloon is refused before it costs anything: anchors and aliases, explicit tags, nesting past
 * SKILL_YAML_DEPTH_MAX, more than SKILL_KEYS_MAX keys, oversized input, invalid UTF-8. */
#pragma once

#include "util.h"

/* The frontmatter is small by nature; anything larger is refused before parsing. */
#define SKILL_FRONTMATTER_MAX (64U * 1024U)
/* SKILL.md as a whole (frontmatter plus Markdown body). */
#define SKILL_MD_MAX (1024U * 1024U)
/* Nesting of YAML collections, the top-level mapping counting as 1. */
#define SKILL_YAML_DEPTH_MAX 32U
/* Keys in the top-level mapping, and separately in metadata; real skills carry a dozen. The cap
 * keeps the duplicate-key check from turning quadratic on a hostile file. */
#define SKILL_KEYS_MAX 512U

/* What a YAML value is. Scalars are always kept as text; a plain (unquoted) scalar is also
 * classified the way YAML 1.1/1.2 parsers (PyYAML, js-yaml) would read it, so lint can point out
 * "version: 1.0" where the specification wants a string. */
typedef enum SkillValueKind {
        SKILL_VALUE_STRING,
        SKILL_VALUE_NULL,       /* empty, ~, null */
        SKILL_VALUE_BOOL,       /* true/false, and YAML 1.1's yes/no/on/off */
        SKILL_VALUE_INT,
        SKILL_VALUE_FLOAT,
        SKILL_VALUE_TIMESTAMP,  /* 2024-01-31 */
        SKILL_VALUE_SEQUENCE,
        SKILL_VALUE_MAPPING,
        _SKILL_VALUE_KIND_MAX,
        _SKILL_VALUE_KIND_INVALID = -EINVAL,
} SkillValueKind;

/* "string", "null", "boolean", "integer", "number", "timestamp", "list", "mapping" */
const char *skill_value_kind_to_string(SkillValueKind k);

/* One frontmatter key as found, with the line it stood on (1-based, in SKILL.md). */
typedef struct SkillField {
        char *key;
        char *value;            /* scalar value, or NULL when the value is a sequence or mapping */
        unsigned line;
        bool is_scalar;
        SkillValueKind kind;
} SkillField;

typedef struct Skill {
        char *md_filename;      /* "SKILL.md" or "skill.md" */

        /* The known keys, set only when their value is usable: a scalar that is not null (for
         * allowed-tools also a list of scalars). A quoted empty string ('' or "") or an empty
         * list is kept as "", so test for isempty(), not for NULL. A key that is present but
         * unusable (a list where a string belongs, no value at all) leaves these NULL and is
         * still in fields[]. */
        char *name;
        char *description;
        char *license;
        char *compatibility;
        char *allowed_tools;    /* space-separated, as the spec writes it; a YAML list is joined */
        char *entry_point;      /* non-standard but common: "entry_point" */
        char *timeout;          /* non-standard, Skillbox's: "timeout: 5s" (see limits.h) */
        char **metadata;        /* key, value, key, value, ... for the scalar entries only */

        SkillField *fields;     /* every top-level key, known or not, in file order */
        size_t n_fields;

        SkillField *metadata_fields;    /* every metadata entry, scalar or not, with its line */
        size_t n_metadata_fields;

        SkillField *resources_fields;   /* non-standard "resources:" (memory, cpu), as metadata */
        size_t n_resources_fields;

        char *body;             /* the Markdown after the frontmatter */
        unsigned body_line;     /* line where the body starts */
} Skill;

Skill *skill_free(Skill *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Skill *, skill_free);

/* Parses SKILL.md text. Fails with a message naming the file (and the line, where one applies)
 * only when the text cannot be a skill description, with these codes:
 *   -EFBIG      larger than SKILL_MD_MAX, or a frontmatter larger than SKILL_FRONTMATTER_MAX
 *   -EILSEQ     invalid UTF-8 or a NUL byte anywhere in the file, or in a decoded value
 *   -EBADMSG    no frontmatter, an unclosed one, YAML syntax errors, a top level that is not a
 *               mapping, several documents, duplicate keys, keys that are not scalars or hold
 *               control characters
 *   -EOPNOTSUPP anchors, aliases or explicit tags
 *   -E2BIG      nesting deeper than SKILL_YAML_DEPTH_MAX, more than SKILL_KEYS_MAX keys
 * filename is only used in messages and stored as md_filename. */
int skill_parse_markdown(const char *text, size_t size, const char *filename, Skill **ret, char **error);

/* Finds SKILL.md (preferred) or skill.md in the skill root dir_fd and parses it. The file must
 * be a regular file, not a symlink (-ELOOP), at most SKILL_MD_MAX bytes; -ENOENT if neither
 * exists. */
int skill_load_at(int dir_fd, Skill **ret, char **error);

/* The field with that key, or NULL. */
const SkillField *skill_get_field(const Skill *s, const char *key);

/* Whether a key is one the specification defines (name, description, license, compatibility,
 * metadata, allowed-tools). */
bool skill_key_is_known(const char *key);
