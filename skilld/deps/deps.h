/* What a skill needs to run: the Python distributions, npm packages, Debian packages and commands
 * its scripts expect, as the skill declares them or as its code shows. This module only finds and
 * names them; building environments that provide them is skilld/env's business.
 *
 * Declarations, all optional and all relative to the skill root:
 *   requirements.txt or scripts/requirements.txt        Python requirements (pip's format)
 *   package.json (+ package-lock.json), or the same in scripts/   npm dependencies
 *   SKILL.md metadata keys, each a string of space-separated items (the Agent Skills
 *   specification wants metadata values to be strings):
 *     python-packages    requirements as pip writes them, e.g. "pypdf>=4 pdfplumber==0.11.4"
 *     node-packages      name or name@range, e.g. "docx@9.5.0 @scope/pkg"
 *     system-packages    Debian package names, e.g. "poppler-utils qpdf"
 *     required-commands  programs the scripts run, e.g. "pdftoppm soffice"
 *
 * Inference, for what the code uses: the top-level imports of the skill's Python scripts (parsed by
 * the host's python3 inside the sandbox, since a parser is a large attack surface to hand a
 * hostile file) less the standard library and the skill's own modules, mapped from import names
 * to distribution names (deps-python-names.c holds that table); and the bare require()/import
 * specifiers of its Node scripts, less Node's builtins and relative paths.
 *
 * Everything read here is untrusted: files are opened under the skill's directory fd without
 * following links, sizes are capped, and a malformed declaration is an error naming the file and
 * line, never a crash or a silent guess. */
#pragma once

#include <cjson/cJSON.h>
#include <sys/types.h>

#include "lint.h"
#include "skill.h"

typedef struct SandboxBackendOps SandboxBackendOps;

/* Declaration files larger than this are refused (real ones are a few hundred bytes). */
#define DEPS_FILE_MAX (1024U * 1024U)
/* Dependencies kept per skill; past it discovery fails with -E2BIG. */
#define DEPS_MAX 4096U

typedef enum DepEcosystem {
        DEP_ECOSYSTEM_PYTHON,   /* a Python distribution; name normalized as PEP 503 does */
        DEP_ECOSYSTEM_NODE,     /* an npm package, "@scope/name" or "name" */
        DEP_ECOSYSTEM_SYSTEM,   /* a Debian binary package */
        DEP_ECOSYSTEM_COMMAND,  /* a program looked up on PATH */
        _DEP_ECOSYSTEM_MAX,
        _DEP_ECOSYSTEM_INVALID = -EINVAL,
} DepEcosystem;

const char *dep_ecosystem_to_string(DepEcosystem e);   /* "python", "node", "system", "command" */
DepEcosystem dep_ecosystem_from_string(const char *s);

typedef enum DepOrigin {
        DEP_ORIGIN_FILE,        /* requirements.txt, package.json */
        DEP_ORIGIN_FRONTMATTER, /* a SKILL.md metadata key */
        DEP_ORIGIN_INFERRED,    /* found in the code */
        _DEP_ORIGIN_MAX,
        _DEP_ORIGIN_INVALID = -EINVAL,
} DepOrigin;

const char *dep_origin_to_string(DepOrigin o);  /* "file", "frontmatter", "inferred" */
DepOrigin dep_origin_from_string(const char *s);

typedef struct SkillDep {
        DepEcosystem ecosystem;
        DepOrigin origin;
        char *name;             /* python: normalized ("python-docx", "pyyaml"); node: the package
                                 * name; system: the Debian package; command: the program */
        char *spec;             /* version constraint as written (">=4,<6", "^9.5.0"), or NULL */
        char *extras;           /* python: "socks,security" from "requests[socks,security]", or NULL */
        char *marker;           /* python: the environment marker after ';', or NULL */
        char *version;          /* node: the version package-lock.json resolved, or NULL */
        char *module;           /* inferred: the import name ("PIL") or specifier ("lodash/fp") */
        char *where;            /* "scripts/requirements.txt:3", "SKILL.md:7", "scripts/fill.py:5" */
        bool pinned;            /* one exact version: "==1.2" (no wildcard) or "===", hashes, or
                                 * (node) an exact version or a lockfile entry */
        bool declared;          /* a declaration names it; always true unless origin is inferred */
        bool mapped;            /* inferred python: the import name came from the mapping table
                                 * rather than being taken as the distribution name */
        bool vendored;          /* inferred node: a node_modules folder in the skill provides it */
        bool optional;          /* inferred python: every import of it is guarded by try/except
                                 * ImportError, so the script copes without it */
} SkillDep;

typedef struct SkillDeps {
        /* Declared ones first (files, then frontmatter), in file order; then the inferred ones,
         * one per (ecosystem, name), at the first place that uses them, sorted by name. An
         * inferred dependency a declaration covers is still listed, with declared set. */
        SkillDep *items;
        size_t n;

        /* The declaration files found, relative to the skill root, or NULL. At most one of each:
         * a skill with both requirements.txt and scripts/requirements.txt is an error. */
        char *requirements_file;
        char *package_json;
        char *package_lock;     /* only next to package_json */

        bool declares;          /* a declaration file or frontmatter key exists (even if empty) */
        bool inferred;          /* inference ran (it was asked for and the skill has scripts) */
        char **unparsed;        /* scripts inference could not read, "scripts/x.py:3: why" */
} SkillDeps;

SkillDeps *skill_deps_free(SkillDeps *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(SkillDeps *, skill_deps_free);

typedef struct SkillDepsOptions {
        /* Run inference. The Python part runs python3 in the sandbox engine (no network, the tree
         * read-only, default limits with a short timeout); the Node part is a scan in this
         * process. */
        bool infer;
        const char *skill_dir;  /* host path of the tree dir_fd names; needed when infer is set */
        const char *python;     /* interpreter for the import scan; NULL: /usr/bin/python3 */
        unsigned allow_missing; /* SandboxLayer bits the scan may run without (as for runs) */
        uid_t uid;              /* root callers: the uid the scan runs as; (uid_t) -1: the engine's */
        const SandboxBackendOps *backend;       /* NULL: the engine's default */
        void *backend_userdata;
} SkillDepsOptions;

#define SKILL_DEPS_OPTIONS_INIT                                 \
        (SkillDepsOptions) {                                    \
                .uid = (uid_t) -1,                              \
        }

/* Finds the declarations under dir_fd (a validated skill tree, see loader.h) and, if asked,
 * infers from the code. skill may be NULL (no frontmatter then). Errors, each with a message
 * naming the file and line:
 *   -EBADMSG    a malformed requirements.txt, package.json, package-lock.json or metadata key
 *   -EOPNOTSUPP what skilld does not honour in a requirements file: nested files (-r, -c),
 *               editable installs, URLs and paths, index options (the index is the policy's)
 *   -EEXIST     two declaration files of one kind (requirements.txt and scripts/requirements.txt)
 *   -EFBIG      a declaration file larger than DEPS_FILE_MAX
 *   -E2BIG      more than DEPS_MAX dependencies
 *   -ELOOP      a declaration file that is a symlink
 * A Python script that does not parse is not an error: it is listed in unparsed. Inference that
 * cannot run at all (no python3, no sandbox) fails with the engine's error. ret is untouched on
 * failure. */
int skill_deps_discover(int dir_fd, const Skill *skill, const SkillDepsOptions *opts, SkillDeps **ret,
                        char **error);

/* The dependencies of one ecosystem that an environment must provide: the declared ones, and the
 * inferred ones no declaration covers and no vendored node_modules provides (optional ones
 * included: check x->optional before calling a missing one fatal). Returns the number found; ret (optional) gets a
 * NULL-terminated array of pointers into d, to be free()d (not its items). */
int skill_deps_needed(const SkillDeps *d, DepEcosystem e, const SkillDep ***ret);

/* {"declared": bool, "requirements_file": ..., "package_json": ..., "package_lock": ...,
 *  "dependencies": [{"ecosystem", "name", "spec", "extras", "marker", "version", "module",
 *  "origin", "where", "pinned", "declared", "vendored", "optional"}...], "unparsed": [...]} */
int skill_deps_to_json(const SkillDeps *d, cJSON **ret);

/* `skill lint`'s rules for dependencies. Given s: the metadata keys above (malformed items are
 * errors with their line; skill_lint() runs this part). Given d: a warning for each inferred
 * dependency no declaration covers when the skill declares something, and for each declared
 * Python or npm requirement that is not pinned. Either may be NULL. */
int skill_deps_lint(const Skill *s, const SkillDeps *d, LintReport *report);

/* Whether key is one of the metadata keys above ("python-packages", ...). */
bool skill_deps_metadata_key_is_known(const char *key);

/* The parsers behind discovery, exposed for tests and fuzzing. Each appends to the array *items of *n_items
 * (origin FILE, declared), with where = "file:line"; file names the file in messages. */
int deps_parse_requirements(const char *text, size_t size, const char *file, SkillDep **items,
                            size_t *n_items, char **error);
/* lock_text may be NULL. Dependencies and optionalDependencies count; devDependencies do not
 * (npm ci --omit=dev leaves them out too). */
int deps_parse_package_json(const char *text, size_t size, const char *file, const char *lock_text,
                            size_t lock_size, const char *lock_file, SkillDep **items, size_t *n_items,
                            char **error);
/* One requirement line as pip reads it ("Pillow[extra]>=10; python_version>'3'"), into dep. */
int deps_parse_requirement(const char *s, SkillDep *dep, char **error);

/* PEP 503 normalization: lower case, runs of "-", "_", "." become one "-". */
char *dep_python_normalize(const char *name);
/* The distribution an import name comes from when they differ ("PIL" -> "pillow", "yaml" ->
 * "pyyaml", "docx" -> "python-docx"), normalized; NULL when the table does not know the name.
 * A dotted name is looked up as given, then by ever shorter prefixes ("google.protobuf.x" ->
 * "google.protobuf" -> protobuf). */
const char *dep_python_distribution_for_import(const char *module);
/* npm's package name rules: "name" or "@scope/name", 1-214 URL-safe characters. */
bool dep_node_name_is_valid(const char *name);
/* Whether a specifier names a Node builtin ("fs", "node:fs", "fs/promises"). */
bool dep_node_is_builtin(const char *specifier);
/* The package a bare specifier names: "lodash/fp" -> "lodash", "@a/b/c" -> "@a/b"; NULL for
 * relative or absolute paths, URLs, builtins and invalid names. */
char *dep_node_package_for_specifier(const char *specifier);

void skill_dep_done(SkillDep *d);
