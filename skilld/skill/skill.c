/* SKILL.md parsing. The file is checked as a whole first (size, NUL bytes, UTF-8), then split into
 * the frontmatter between two "---" lines and the Markdown body. The frontmatter goes through
 * libyaml's event parser with every event passing one gate (parser_next()) that refuses anchors,
 * aliases and tags and counts nesting, so no input can make us expand, recurse or loop: the work
 * done is linear in the (capped) size of the frontmatter. */
#include <sys/stat.h>
#include <yaml.h>

#include "error.h"
#include "fileio.h"
#include "skill.h"
#include "string-table.h"

/* The frontmatter's first line is line 2 of SKILL.md (line 1 is "---"); libyaml counts from 0. */
#define FRONTMATTER_LINE_OFFSET 2U

static const char * const known_keys[] = {
        "name",
        "description",
        "license",
        "compatibility",
        "metadata",
        "allowed-tools",
};

bool skill_key_is_known(const char *key) {
        if (!key)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(known_keys); i++)
                if (streq(key, known_keys[i]))
                        return true;
        return false;
}

static const char * const value_kind_table[_SKILL_VALUE_KIND_MAX] = {
        [SKILL_VALUE_STRING]    = "string",
        [SKILL_VALUE_NULL]      = "null",
        [SKILL_VALUE_BOOL]      = "boolean",
        [SKILL_VALUE_INT]       = "integer",
        [SKILL_VALUE_FLOAT]     = "number",
        [SKILL_VALUE_TIMESTAMP] = "timestamp",
        [SKILL_VALUE_SEQUENCE]  = "list",
        [SKILL_VALUE_MAPPING]   = "mapping",
};

DEFINE_STRING_TABLE_TO_STRING(skill_value_kind, SkillValueKind, value_kind_table);

static void skill_field_done(SkillField *f) {
        free(f->key);
        free(f->value);
        *f = (SkillField) {};
}

static void skill_fields_free(SkillField *fields, size_t n) {
        for (size_t i = 0; i < n; i++)
                skill_field_done(&fields[i]);
        free(fields);
}

Skill *skill_free(Skill *s) {
        if (!s)
                return NULL;

        free(s->md_filename);
        free(s->name);
        free(s->description);
        free(s->license);
        free(s->compatibility);
        free(s->allowed_tools);
        free(s->entry_point);
        free(s->timeout);
        strv_free(s->metadata);
        skill_fields_free(s->fields, s->n_fields);
        skill_fields_free(s->metadata_fields, s->n_metadata_fields);
        skill_fields_free(s->resources_fields, s->n_resources_fields);
        free(s->body);
        free(s);
        return NULL;
}

const SkillField *skill_get_field(const Skill *s, const char *key) {
        if (!s || !key)
                return NULL;
        for (size_t i = 0; i < s->n_fields; i++)
                if (streq_ptr(s->fields[i].key, key))
                        return &s->fields[i];
        return NULL;
}

/* Moves *f to the end of the array; on success *f is left empty. */
static int field_append(SkillField **array, size_t *n, SkillField *f) {
        SkillField *a;

        a = reallocarray(*array, *n + 1, sizeof(SkillField));
        if (!a)
                return -ENOMEM;
        a[(*n)++] = *f;
        *f = (SkillField) {};
        *array = a;
        return 0;
}

static const SkillField *fields_find(const SkillField *fields, size_t n, const char *key) {
        for (size_t i = 0; i < n; i++)
                if (streq(fields[i].key, key))
                        return &fields[i];
        return NULL;
}

static bool span_all(const char *s, const char *accept) {
        return s[0] != '\0' && s[strspn(s, accept)] == '\0';
}

static bool str_in(const char *s, const char * const *list, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (streq(s, list[i]))
                        return true;
        return false;
}

/* How a YAML 1.1 parser (PyYAML) or a YAML 1.2 core-schema parser would read an unquoted scalar:
 * if either of them does not see a string, a tool reading the skill may not either. */
static SkillValueKind plain_scalar_kind(const char *v) {
        static const char * const nulls[] = { "", "~", "null", "Null", "NULL" };
        static const char * const bools[] = {
                "true", "True", "TRUE", "false", "False", "FALSE",
                "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF",
        };
        static const char * const specials[] = {
                ".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN",
        };
        bool digits = false, frac = false, exp = false;
        const char *p = v;

        if (str_in(v, nulls, ELEMENTSOF(nulls)))
                return SKILL_VALUE_NULL;
        if (str_in(v, bools, ELEMENTSOF(bools)))
                return SKILL_VALUE_BOOL;

        /* 2024-01-31, optionally followed by a time */
        if (strlen(v) >= 8 && strspn(v, "0123456789") == 4 && v[4] == '-') {
                size_t m = strspn(v + 5, "0123456789"), d;

                if ((m == 1 || m == 2) && v[5 + m] == '-') {
                        d = strspn(v + 6 + m, "0123456789");
                        if ((d == 1 || d == 2) && strchr("Tt \t", v[6 + m + d]))
                                return SKILL_VALUE_TIMESTAMP;
                }
        }

        if (*p == '+' || *p == '-')
                p++;
        if (str_in(p, specials, ELEMENTSOF(specials)))
                return SKILL_VALUE_FLOAT;
        if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
                return span_all(p + 2, "0123456789abcdefABCDEF_") ? SKILL_VALUE_INT : SKILL_VALUE_STRING;
        if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O'))
                return span_all(p + 2, "01234567_") ? SKILL_VALUE_INT : SKILL_VALUE_STRING;
        if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B'))
                return span_all(p + 2, "01_") ? SKILL_VALUE_INT : SKILL_VALUE_STRING;

        /* [0-9][0-9_]* (:[0-5]?[0-9])* (. [0-9_]*)? ([eE][-+]?[0-9]+)? */
        if (*p >= '0' && *p <= '9') {
                digits = true;
                p += strspn(p, "0123456789_");
                while (*p == ':') {
                        size_t k = strspn(p + 1, "0123456789");

                        if (k < 1 || k > 2)
                                return SKILL_VALUE_STRING;
                        p += 1 + k;
                }
        }
        if (*p == '.') {
                size_t k = strspn(p + 1, "0123456789_");

                frac = true;
                digits = digits || strspn(p + 1, "0123456789") > 0;
                p += 1 + k;
        }
        if (digits && (*p == 'e' || *p == 'E')) {
                const char *q = p + 1;

                if (*q == '+' || *q == '-')
                        q++;
                if (strspn(q, "0123456789") == 0)
                        return SKILL_VALUE_STRING;
                exp = true;
                p = q + strspn(q, "0123456789");
        }
        if (!digits || *p != '\0')
                return SKILL_VALUE_STRING;
        return frac || exp ? SKILL_VALUE_FLOAT : SKILL_VALUE_INT;
}

typedef struct Parser {
        yaml_parser_t yaml;
        bool initialized;
        const char *file;
        unsigned depth;
        char **error;

        const char *frontmatter;
        size_t frontmatter_size;
        size_t cursor_index;            /* characters, as libyaml counts marks */
        size_t cursor_byte;
        unsigned cursor_line;           /* 0-based, in the frontmatter */
} Parser;

static void parser_done(Parser *p) {
        if (p->initialized)
                yaml_parser_delete(&p->yaml);
        p->initialized = false;
}

/* The SKILL.md line of a libyaml mark. libyaml's own line count also breaks at a lone CR, NEL,
 * U+2028 and U+2029, which editors do not, so the line is counted here from the mark's character
 * index instead: only "\n" ends a line, as in split_markdown(). Marks mostly move forward, so a
 * cursor keeps this linear; a mark behind it (only in an error) restarts the count. */
static unsigned mark_line(Parser *p, yaml_mark_t m) {
        if (m.index < p->cursor_index)
                p->cursor_index = p->cursor_byte = p->cursor_line = 0;

        while (p->cursor_index < m.index && p->cursor_byte < p->frontmatter_size) {
                unsigned char c = p->frontmatter[p->cursor_byte];

                /* The text is valid UTF-8 (checked before parsing): the lead byte gives the length. */
                if (c == '\n' && p->cursor_line < UINT_MAX - FRONTMATTER_LINE_OFFSET)
                        p->cursor_line++;
                p->cursor_byte += c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
                p->cursor_index++;
        }
        return p->cursor_line + FRONTMATTER_LINE_OFFSET;
}

static unsigned event_line(Parser *p, const yaml_event_t *ev) {
        return mark_line(p, ev->start_mark);
}

/* The one gate every event passes: parse errors, anchors, aliases, tags and depth. Since nothing
 * else calls yaml_parser_parse(), none of these can slip through in a nested value. */
static int parser_next(Parser *p, yaml_event_t *ev) {
        const yaml_char_t *anchor = NULL, *tag = NULL;

        if (!yaml_parser_parse(&p->yaml, ev)) {
                if (p->yaml.error == YAML_MEMORY_ERROR)
                        return -ENOMEM;
                /* "while parsing a flow sequence" alone does not say which one. */
                if (p->yaml.context)
                        return error_setf(p->error, -EBADMSG,
                                          "%s:%u: invalid YAML: %s %s started on line %u", p->file,
                                          mark_line(p, p->yaml.problem_mark), strna(p->yaml.problem),
                                          p->yaml.context, mark_line(p, p->yaml.context_mark));
                return error_setf(p->error, -EBADMSG, "%s:%u: invalid YAML: %s", p->file,
                                  mark_line(p, p->yaml.problem_mark), strna(p->yaml.problem));
        }

        switch (ev->type) {
        case YAML_ALIAS_EVENT:
                return error_setf(p->error, -EOPNOTSUPP, "%s:%u: YAML anchors and aliases are not supported",
                                  p->file, event_line(p, ev));
        case YAML_SCALAR_EVENT:
                anchor = ev->data.scalar.anchor;
                tag = ev->data.scalar.tag;
                break;
        case YAML_SEQUENCE_START_EVENT:
                anchor = ev->data.sequence_start.anchor;
                tag = ev->data.sequence_start.tag;
                p->depth++;
                break;
        case YAML_MAPPING_START_EVENT:
                anchor = ev->data.mapping_start.anchor;
                tag = ev->data.mapping_start.tag;
                p->depth++;
                break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
                if (p->depth > 0)
                        p->depth--;
                break;
        case YAML_NO_EVENT:
        case YAML_STREAM_START_EVENT:
        case YAML_STREAM_END_EVENT:
        case YAML_DOCUMENT_START_EVENT:
        case YAML_DOCUMENT_END_EVENT:
        default:
                break;
        }

        if (anchor)
                return error_setf(p->error, -EOPNOTSUPP, "%s:%u: YAML anchors and aliases are not supported",
                                  p->file, event_line(p, ev));
        if (tag) {
                _cleanup_free_ char *t = cescape((const char *) tag);

                return error_setf(p->error, -EOPNOTSUPP, "%s:%u: YAML tags are not supported (found %s)",
                                  p->file, event_line(p, ev), t ?: "a tag");
        }
        if (p->depth > SKILL_YAML_DEPTH_MAX)
                return error_setf(p->error, -E2BIG, "%s:%u: YAML nesting deeper than %u levels",
                                  p->file, event_line(p, ev), SKILL_YAML_DEPTH_MAX);
        return 0;
}

static int parser_expect(Parser *p, yaml_event_type_t type) {
        _cleanup_(yaml_event_delete) yaml_event_t ev = {};
        int r;

        r = parser_next(p, &ev);
        if (r < 0)
                return r;
        if (ev.type != type)
                return error_setf(p->error, -EBADMSG, "%s:%u: unexpected YAML structure", p->file,
                                  event_line(p, &ev));
        return 0;
}

/* Consumes the rest of a sequence or mapping whose start event was just read. */
static int parser_skip_collection(Parser *p) {
        unsigned level = p->depth;
        int r;

        while (p->depth >= level) {
                _cleanup_(yaml_event_delete) yaml_event_t ev = {};

                r = parser_next(p, &ev);
                if (r < 0)
                        return r;
                /* libyaml balances its events; this only guards against a bug there. */
                if (ev.type == YAML_STREAM_END_EVENT || ev.type == YAML_DOCUMENT_END_EVENT)
                        return error_setf(p->error, -EBADMSG, "%s:%u: unexpected end of YAML",
                                          p->file, event_line(p, &ev));
        }
        return 0;
}

/* The text of a scalar event. Escapes in double-quoted scalars ("\0") can produce bytes the file
 * check did not see, so the decoded value is checked again. */
static int parser_scalar_text(Parser *p, const yaml_event_t *ev, char **ret) {
        const char *v = (const char *) ev->data.scalar.value;
        size_t n = ev->data.scalar.length;
        char *t;

        if (memchr(v, 0, n))
                return error_setf(p->error, -EILSEQ, "%s:%u: a value holds a NUL character", p->file,
                                  event_line(p, ev));
        if (!utf8_is_valid(v, n))
                return error_setf(p->error, -EILSEQ, "%s:%u: a value is not valid UTF-8", p->file,
                                  event_line(p, ev));
        t = strndup(v, n);
        if (!t)
                return -ENOMEM;
        *ret = t;
        return 0;
}

static SkillValueKind scalar_kind(const yaml_event_t *ev, const char *text) {
        if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
                return SKILL_VALUE_STRING;
        return plain_scalar_kind(text);
}

/* Reads a mapping key. Complex keys ("? [a, b]") are refused: no skill needs them and they
 * would have no sensible text form. So are control characters: keys end up in diagnostics and
 * listings, and no real key holds an escape sequence. */
static int parser_key(Parser *p, const yaml_event_t *ev, const char *where, SkillField *f) {
        int r;

        if (ev->type != YAML_SCALAR_EVENT)
                return error_setf(p->error, -EBADMSG, "%s:%u: %s keys must be plain strings", p->file,
                                  event_line(p, ev), where);
        r = parser_scalar_text(p, ev, &f->key);
        if (r < 0)
                return r;
        f->line = event_line(p, ev);
        if (string_has_cc(f->key, strlen(f->key)))
                return error_setf(p->error, -EBADMSG, "%s:%u: %s keys must not hold control characters",
                                  p->file, f->line, where);
        return 0;
}

/* Reads the value that follows a key into f. A collection is consumed by parse_collection (if
 * given) or skipped; either way f records its kind and no text. */
static int parser_value(Parser *p, SkillField *f,
                        int (*parse_collection)(Parser *p, const yaml_event_t *ev, void *userdata),
                        void *userdata) {
        _cleanup_(yaml_event_delete) yaml_event_t ev = {};
        int r;

        r = parser_next(p, &ev);
        if (r < 0)
                return r;

        switch (ev.type) {
        case YAML_SCALAR_EVENT:
                r = parser_scalar_text(p, &ev, &f->value);
                if (r < 0)
                        return r;
                f->kind = scalar_kind(&ev, f->value);
                f->is_scalar = true;
                return 0;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
                f->kind = ev.type == YAML_SEQUENCE_START_EVENT ? SKILL_VALUE_SEQUENCE : SKILL_VALUE_MAPPING;
                f->is_scalar = false;
                if (parse_collection)
                        return parse_collection(p, &ev, userdata);
                return parser_skip_collection(p);
        case YAML_NO_EVENT:
        case YAML_STREAM_START_EVENT:
        case YAML_STREAM_END_EVENT:
        case YAML_DOCUMENT_START_EVENT:
        case YAML_DOCUMENT_END_EVENT:
        case YAML_ALIAS_EVENT:
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
        default:
                return error_setf(p->error, -EBADMSG, "%s:%u: unexpected YAML structure", p->file,
                                  event_line(p, &ev));
        }
}

/* where: "top-level" or "metadata"; prefix: how keys there are written, "" or "metadata.". */
static int check_new_key(Parser *p, const SkillField *fields, size_t n, const SkillField *f,
                         const char *where, const char *prefix) {
        const SkillField *dup;

        if (n >= SKILL_KEYS_MAX)
                return error_setf(p->error, -E2BIG, "%s:%u: more than %u %s keys", p->file, f->line,
                                  SKILL_KEYS_MAX, where);
        dup = fields_find(fields, n, f->key);
        if (dup) {
                _cleanup_free_ char *k = cescape(f->key);

                return error_setf(p->error, -EBADMSG, "%s:%u: duplicate key '%s%s' (first on line %u)",
                                  p->file, f->line, prefix, strempty(k), dup->line);
        }
        return 0;
}

/* A nested mapping whose entries are all recorded with their lines: metadata, resources. */
typedef struct SubMapping {
        SkillField **fields;
        size_t *n_fields;
        char ***pairs;          /* scalar entries as key, value, ...; NULL: not kept */
        const char *where;      /* "metadata", for messages */
        const char *prefix;     /* "metadata.", how its keys are written */
} SubMapping;

/* metadata and resources: mappings whose entries are all recorded (with their lines); scalar
 * entries of metadata also go into its key/value list. Nested values are skipped, lint reports
 * them. */
static int parse_sub_mapping(Parser *p, const yaml_event_t *start, void *userdata) {
        const SubMapping *m = userdata;
        int r;

        if (start->type != YAML_MAPPING_START_EVENT)
                return parser_skip_collection(p);

        for (;;) {
                _cleanup_(yaml_event_delete) yaml_event_t ev = {};
                _cleanup_(skill_field_done) SkillField f = {};

                r = parser_next(p, &ev);
                if (r < 0)
                        return r;
                if (ev.type == YAML_MAPPING_END_EVENT)
                        return 0;

                r = parser_key(p, &ev, m->where, &f);
                if (r < 0)
                        return r;
                r = check_new_key(p, *m->fields, *m->n_fields, &f, m->where, m->prefix);
                if (r < 0)
                        return r;
                r = parser_value(p, &f, NULL, NULL);
                if (r < 0)
                        return r;

                if (f.is_scalar && m->pairs) {
                        r = strv_extend(m->pairs, f.key);
                        if (r >= 0)
                                r = strv_extend(m->pairs, f.value);
                        if (r < 0)
                                return r;
                }
                r = field_append(m->fields, m->n_fields, &f);
                if (r < 0)
                        return r;
        }
}

/* allowed-tools as a YAML list: joined with spaces, the form the specification writes. A list
 * holding anything but scalars yields no value at all, which lint reports. */
static int parse_tools_list(Parser *p, const yaml_event_t *start, void *userdata) {
        char **ret = userdata;
        _cleanup_free_ char *joined = NULL;
        size_t len = 0;
        bool bad = false;
        int r;

        if (start->type != YAML_SEQUENCE_START_EVENT)
                return parser_skip_collection(p);

        joined = strdup("");
        if (!joined)
                return -ENOMEM;

        for (;;) {
                _cleanup_(yaml_event_delete) yaml_event_t ev = {};
                _cleanup_free_ char *item = NULL;
                size_t n;
                char *j;

                r = parser_next(p, &ev);
                if (r < 0)
                        return r;
                if (ev.type == YAML_SEQUENCE_END_EVENT)
                        break;
                if (ev.type != YAML_SCALAR_EVENT) {
                        bad = true;
                        r = parser_skip_collection(p);
                        if (r < 0)
                                return r;
                        continue;
                }

                r = parser_scalar_text(p, &ev, &item);
                if (r < 0)
                        return r;
                n = strlen(item);
                j = realloc(joined, len + (len > 0) + n + 1);
                if (!j)
                        return -ENOMEM;
                joined = j;
                if (len > 0)
                        joined[len++] = ' ';
                memcpy(joined + len, item, n + 1);
                len += n;
        }

        *ret = bad ? NULL : TAKE_PTR(joined);
        return 0;
}

/* Where a known key's usable value goes. */
static char **skill_known_string(Skill *s, const char *key) {
        if (streq(key, "name"))
                return &s->name;
        if (streq(key, "description"))
                return &s->description;
        if (streq(key, "license"))
                return &s->license;
        if (streq(key, "compatibility"))
                return &s->compatibility;
        if (streq(key, "allowed-tools"))
                return &s->allowed_tools;
        if (streq(key, "entry_point"))
                return &s->entry_point;
        if (streq(key, "timeout"))
                return &s->timeout;
        return NULL;
}

static int parse_top_entry(Parser *p, Skill *s, const yaml_event_t *key_ev) {
        _cleanup_(skill_field_done) SkillField f = {};
        _cleanup_free_ char *tools = NULL;
        char **target;
        int r;

        r = parser_key(p, key_ev, "top-level", &f);
        if (r < 0)
                return r;
        r = check_new_key(p, s->fields, s->n_fields, &f, "top-level", "");
        if (r < 0)
                return r;

        if (streq(f.key, "metadata"))
                r = parser_value(p, &f, parse_sub_mapping, &(SubMapping) {
                        &s->metadata_fields, &s->n_metadata_fields, &s->metadata, "metadata", "metadata.",
                });
        else if (streq(f.key, "resources"))
                r = parser_value(p, &f, parse_sub_mapping, &(SubMapping) {
                        &s->resources_fields, &s->n_resources_fields, NULL, "resources", "resources.",
                });
        else if (streq(f.key, "allowed-tools"))
                r = parser_value(p, &f, parse_tools_list, &tools);
        else
                r = parser_value(p, &f, NULL, NULL);
        if (r < 0)
                return r;

        target = skill_known_string(s, f.key);
        if (target) {
                if (f.is_scalar && f.kind != SKILL_VALUE_NULL) {
                        *target = strdup(f.value);
                        if (!*target)
                                return -ENOMEM;
                } else if (tools)
                        *target = TAKE_PTR(tools);
        }

        return field_append(&s->fields, &s->n_fields, &f);
}

static int parse_frontmatter(Parser *p, Skill *s) {
        int r;

        r = parser_expect(p, YAML_STREAM_START_EVENT);
        if (r < 0)
                return r;

        {
                _cleanup_(yaml_event_delete) yaml_event_t ev = {};

                r = parser_next(p, &ev);
                if (r < 0)
                        return r;
                /* Nothing but comments and blank lines: a skill without keys, for lint to judge. */
                if (ev.type == YAML_STREAM_END_EVENT)
                        return 0;
                if (ev.type != YAML_DOCUMENT_START_EVENT)
                        return error_setf(p->error, -EBADMSG, "%s:%u: unexpected YAML structure",
                                          p->file, event_line(p, &ev));
        }

        {
                _cleanup_(yaml_event_delete) yaml_event_t ev = {};

                r = parser_next(p, &ev);
                if (r < 0)
                        return r;
                if (ev.type != YAML_MAPPING_START_EVENT)
                        return error_setf(p->error, -EBADMSG,
                                          "%s:%u: the frontmatter must be a YAML mapping of keys to values, "
                                          "found a %s", p->file, event_line(p, &ev),
                                          ev.type == YAML_SEQUENCE_START_EVENT ? "list" : "scalar");
        }

        for (;;) {
                _cleanup_(yaml_event_delete) yaml_event_t ev = {};

                r = parser_next(p, &ev);
                if (r < 0)
                        return r;
                if (ev.type == YAML_MAPPING_END_EVENT)
                        break;
                r = parse_top_entry(p, s, &ev);
                if (r < 0)
                        return r;
        }

        r = parser_expect(p, YAML_DOCUMENT_END_EVENT);
        if (r < 0)
                return r;

        {
                _cleanup_(yaml_event_delete) yaml_event_t ev = {};

                r = parser_next(p, &ev);
                if (r < 0)
                        return r;
                if (ev.type == YAML_DOCUMENT_START_EVENT)
                        return error_setf(p->error, -EBADMSG,
                                          "%s:%u: the frontmatter holds more than one YAML document",
                                          p->file, event_line(p, &ev));
                if (ev.type != YAML_STREAM_END_EVENT)
                        return error_setf(p->error, -EBADMSG, "%s:%u: unexpected YAML structure",
                                          p->file, event_line(p, &ev));
        }
        return 0;
}

/* "---", optionally followed by blanks; a CR of a CRLF line end counts as one. */
static bool line_is_delimiter(const char *l, size_t n) {
        if (n < 3 || memcmp(l, "---", 3) != 0)
                return false;
        for (size_t i = 3; i < n; i++)
                if (!strchr(" \t\r", l[i]) || l[i] == '\0')
                        return false;
        return true;
}

typedef struct Split {
        const char *frontmatter;
        size_t frontmatter_size;
        const char *body;
        size_t body_size;
        unsigned body_line;
} Split;

static int split_markdown(const char *text, size_t size, const char *file, Split *ret, char **error) {
        const char *end = text + size, *p = text, *eol, *fm;
        unsigned line = 2;

        if (size >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
                p += 3;

        eol = memchr(p, '\n', end - p);
        if (!line_is_delimiter(p, (eol ?: end) - p))
                return error_setf(error, -EBADMSG,
                                  "%s: no YAML frontmatter: the file must start with a '---' line", file);

        fm = p = eol ? eol + 1 : end;
        while (p < end) {
                eol = memchr(p, '\n', end - p);
                if (line_is_delimiter(p, (eol ?: end) - p)) {
                        *ret = (Split) {
                                .frontmatter = fm,
                                .frontmatter_size = p - fm,
                                .body = eol ? eol + 1 : end,
                                .body_size = end - (eol ? eol + 1 : end),
                                .body_line = line + 1,
                        };
                        return 0;
                }
                p = eol ? eol + 1 : end;
                line++;
        }

        return error_setf(error, -EBADMSG,
                          "%s: the frontmatter opened on line 1 is not closed by a '---' line", file);
}

/* NUL bytes and invalid UTF-8 anywhere in the file, reported with their line. A multi-byte
 * sequence never contains '\n', so checking line by line is the same as checking the whole. */
static int check_text(const char *text, size_t size, const char *file, char **error) {
        const char *p = text, *end = text + size;

        for (unsigned line = 1; p < end; line++) {
                const char *eol = memchr(p, '\n', end - p);
                size_t n = (eol ?: end) - p;

                if (memchr(p, 0, n))
                        return error_setf(error, -EILSEQ, "%s:%u: the file holds a NUL byte", file, line);
                if (!utf8_is_valid(p, n))
                        return error_setf(error, -EILSEQ, "%s:%u: the file is not valid UTF-8", file, line);
                p = eol ? eol + 1 : end;
        }
        return 0;
}

int skill_parse_markdown(const char *text, size_t size, const char *filename, Skill **ret, char **error) {
        _cleanup_(skill_freep) Skill *s = NULL;
        _cleanup_(parser_done) Parser p = {};
        Split split = {};
        int r;

        if (!text && size > 0)
                return -EINVAL;
        if (!ret)
                return -EINVAL;
        filename = filename ?: "SKILL.md";

        if (size > SKILL_MD_MAX)
                return error_setf(error, -EFBIG, "%s: larger than the %u MiB cap", filename,
                                  SKILL_MD_MAX / (1024U * 1024U));
        r = check_text(text ?: "", size, filename, error);
        if (r < 0)
                return r;
        r = split_markdown(text ?: "", size, filename, &split, error);
        if (r < 0)
                return r;
        if (split.frontmatter_size > SKILL_FRONTMATTER_MAX)
                return error_setf(error, -EFBIG, "%s: the frontmatter is larger than the %u KiB cap",
                                  filename, SKILL_FRONTMATTER_MAX / 1024);

        s = calloc(1, sizeof(Skill));
        if (!s)
                return -ENOMEM;
        s->md_filename = strdup(filename);
        s->body = strndup(split.body, split.body_size);
        if (!s->md_filename || !s->body)
                return -ENOMEM;
        s->body_line = split.body_line;

        if (!yaml_parser_initialize(&p.yaml))
                return -ENOMEM;
        p.initialized = true;
        p.file = filename;
        p.error = error;
        p.frontmatter = split.frontmatter;
        p.frontmatter_size = split.frontmatter_size;
        yaml_parser_set_encoding(&p.yaml, YAML_UTF8_ENCODING);
        yaml_parser_set_input_string(&p.yaml, (const unsigned char *) split.frontmatter,
                                     split.frontmatter_size);

        r = parse_frontmatter(&p, s);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(s);
        return 0;
}

int skill_load_at(int dir_fd, Skill **ret, char **error) {
        static const char * const names[] = { "SKILL.md", "skill.md" };
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = -EBADF;
        const char *name = NULL;
        struct stat st;
        size_t size;
        int r;

        if (!ret)
                return -EINVAL;

        /* O_NONBLOCK: a FIFO named SKILL.md must not hang the open; it is refused below. */
        for (size_t i = 0; i < ELEMENTSOF(names) && !name; i++) {
                fd = openat(dir_fd, names[i], O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
                if (fd >= 0)
                        name = names[i];
                else if (errno == ELOOP)
                        return error_setf(error, -ELOOP, "%s: is a symlink, which is not allowed", names[i]);
                else if (errno != ENOENT)
                        return error_setf(error, -errno, "%s: cannot open: %m", names[i]);
        }
        if (!name)
                return error_setf(error, -ENOENT, "no SKILL.md in the skill folder");

        if (fstat(fd, &st) < 0)
                return error_setf(error, -errno, "%s: cannot stat: %m", name);
        if (!S_ISREG(st.st_mode))
                return error_setf(error, -EBADFD, "%s: not a regular file", name);
        if ((uint64_t) st.st_size > SKILL_MD_MAX)
                return error_setf(error, -EFBIG, "%s: larger than the %u MiB cap", name,
                                  SKILL_MD_MAX / (1024U * 1024U));

        r = read_full_fd(fd, SKILL_MD_MAX, &text, &size);
        if (r == -EFBIG)
                return error_setf(error, r, "%s: larger than the %u MiB cap", name,
                                  SKILL_MD_MAX / (1024U * 1024U));
        if (r < 0)
                return error_setf(error, r, "%s: cannot read: %m", name);

        return skill_parse_markdown(text, size, name, ret, error);
}
