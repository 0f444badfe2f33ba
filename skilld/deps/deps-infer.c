/* Inference of what a skill's code needs, for the many skills that declare nothing.
 *
 * Python: the host's python3 parses every .py file of the tree with the ast module, inside the
 * sandbox engine (no network, the tree read-only at /skill, the usual limits and a short timeout),
 * because a parser is attack surface and the files are hostile. It reports each absolute import
 * (import x, from x import y, __import__("x"), importlib.import_module("x")) that is not in
 * sys.stdlib_module_names, marked optional inside try/except ImportError or if TYPE_CHECKING;
 * this side then drops the skill's own modules (any .py file, package folder or extension module
 * in the tree: "from scripts.office import pack", or a sibling "import helpers") and maps the rest
 * to distribution names (deps-names.c).
 *
 * Node: a small lexer in this process finds the specifiers of require("x"), import ... from "x",
 * import "x", import("x") and export ... from "x" in .js/.mjs/.cjs files, skipping comments,
 * strings, template literals and regular expressions; relative paths and builtins are dropped. It
 * only reads bytes, so it needs no sandbox. */
#include <dirent.h>
#include <sys/stat.h>

#include "deps-internal.h"
#include "engine.h"
#include "entry.h"
#include "error.h"
#include "fileio.h"
#include "json-exact.h"

/* Past these the scan stops walking, and says so in unparsed. */
#define INFER_FILES_MAX 5000U
#define INFER_DEPTH_MAX 32U
/* Larger scripts are not scanned (and are listed as unparsed): they are generated or vendored. */
#define INFER_FILE_MAX (4U * 1024U * 1024U)
#define INFER_TIMEOUT_USEC (30ULL * 1000 * 1000)

/* Runs as "python3 -I -S -B -c CODE /skill/<first file>", the list of files on stdin as JSON. */
static const char python_scanner[] =
        "import ast, json, sys\n"
        "std = set(sys.stdlib_module_names) | set(sys.builtin_module_names)\n"
        "files = json.loads(sys.stdin.read())['files']\n"
        "imports, errors = [], []\n"
        "def guarded(handlers):\n"
        "    for h in handlers:\n"
        "        t = h.type\n"
        "        names = [t] if not isinstance(t, ast.Tuple) else list(t.elts)\n"
        "        if t is None or any(isinstance(n, ast.Name) and n.id in\n"
        "                            ('ImportError', 'ModuleNotFoundError', 'Exception') for n in names):\n"
        "            return True\n"
        "    return False\n"
        "class V(ast.NodeVisitor):\n"
        "    def __init__(self, rel):\n"
        "        self.rel, self.optional = rel, 0\n"
        "    def add(self, node, name):\n"
        "        if name and name.split('.')[0] not in std:\n"
        "            imports.append([self.rel, node.lineno, name, self.optional > 0])\n"
        "    def visit_Try(self, node):\n"
        "        g = guarded(node.handlers)\n"
        "        self.optional += g\n"
        "        for n in node.body:\n"
        "            self.visit(n)\n"
        "        self.optional -= g\n"
        "        for n in node.handlers + node.orelse + node.finalbody:\n"
        "            self.visit(n)\n"
        "    visit_TryStar = visit_Try\n"
        "    def visit_If(self, node):\n"
        "        t = node.test\n"
        "        g = (t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else '') \\\n"
        "            == 'TYPE_CHECKING'\n"
        "        self.optional += g\n"
        "        for n in node.body:\n"
        "            self.visit(n)\n"
        "        self.optional -= g\n"
        "        for n in node.orelse:\n"
        "            self.visit(n)\n"
        "    def visit_Import(self, node):\n"
        "        for a in node.names:\n"
        "            self.add(node, a.name)\n"
        "    def visit_ImportFrom(self, node):\n"
        "        if not node.level:\n"
        "            self.add(node, node.module)\n"
        "    def visit_Call(self, node):\n"
        "        f = node.func\n"
        "        fn = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None\n"
        "        if fn in ('__import__', 'import_module') and node.args and \\\n"
        "           isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):\n"
        "            self.add(node, node.args[0].value)\n"
        "        self.generic_visit(node)\n"
        "for rel in files:\n"
        "    try:\n"
        "        with open('/skill/' + rel, 'rb') as f:\n"
        "            tree = ast.parse(f.read(), rel)\n"
        "        V(rel).visit(tree)\n"
        "    except SyntaxError as e:\n"
        "        errors.append([rel, e.lineno or 0, e.msg or 'invalid syntax'])\n"
        "    except (OSError, ValueError, RecursionError, MemoryError) as e:\n"
        "        errors.append([rel, 0, type(e).__name__])\n"
        "json.dump({'imports': imports, 'errors': errors}, sys.stdout)\n";

typedef struct Scan {
        char **python_files;    /* relative paths, sorted */
        char **node_files;
        char **own_modules;     /* names Python would import from the tree itself */
        char **node_modules;    /* "dir/node_modules/pkg" paths, dir "" for the root */
        char **root_names;      /* entries of the skill root, less extensions: what a bare
                                 * specifier finds through NODE_PATH=/skill ("lib/x" is lib/x.js) */
        char **too_large;       /* scripts past INFER_FILE_MAX, not scanned */
        size_t n_files;
        bool truncated;
} Scan;

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);
DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

/* d_type, or what fstatat() says where the file system does not fill it in. */
static unsigned char entry_type(DIR *d, const struct dirent *de) {
        struct stat st;

        if (de->d_type != DT_UNKNOWN)
                return de->d_type;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return DT_UNKNOWN;
        return S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
}

static void scan_done(Scan *s) {
        strv_free(s->python_files);
        strv_free(s->node_files);
        strv_free(s->own_modules);
        strv_free(s->node_modules);
        strv_free(s->root_names);
        strv_free(s->too_large);
}

static int add_own_module(Scan *s, const char *name, size_t n) {
        _cleanup_free_ char *m = strndup(name, n);

        if (!m)
                return -ENOMEM;
        if (strv_contains(s->own_modules, m))
                return 0;
        return strv_push(&s->own_modules, TAKE_PTR(m));
}

/* Records the packages of a node_modules folder ("@scope/x" counts as one). */
static int scan_node_modules(Scan *s, int fd, const char *path) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int dfd, r;

        dfd = openat(fd, "node_modules", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return 0;
        d = fdopendir(dfd);
        if (!d) {
                (void) safe_close(dfd);
                return 0;
        }
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.' || entry_type(d, de) != DT_DIR)
                        continue;
                if (de->d_name[0] == '@') {
                        _cleanup_close_ int sfd = openat(dirfd(d), de->d_name,
                                                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        _cleanup_(closedirp) DIR *sd = NULL;
                        struct dirent *se;

                        if (sfd < 0 || !(sd = fdopendir(sfd)))
                                continue;
                        TAKE_FD(sfd);
                        while ((se = readdir(sd))) {
                                if (se->d_name[0] == '.' || entry_type(sd, se) != DT_DIR)
                                        continue;
                                char *p = strdup_printf("%s%snode_modules/%s/%s", path, *path ? "/" : "",
                                                        de->d_name, se->d_name);
                                r = p ? strv_push(&s->node_modules, p) : -ENOMEM;
                                if (r < 0)
                                        return r;
                        }
                        continue;
                }
                char *p = strdup_printf("%s%snode_modules/%s", path, *path ? "/" : "", de->d_name);
                r = p ? strv_push(&s->node_modules, p) : -ENOMEM;
                if (r < 0)
                        return r;
        }
        return 0;
}

static int scan_dir(Scan *s, int fd, const char *path, unsigned depth) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int r;

        if (depth > INFER_DEPTH_MAX) {
                s->truncated = true;
                return 0;
        }
        d = fdopendir(fd);
        if (!d) {
                (void) safe_close(fd);
                return -errno;
        }
        while ((de = readdir(d))) {
                const char *n = de->d_name, *ext;
                _cleanup_free_ char *rel = NULL;
                unsigned char type;

                if (n[0] == '.')
                        continue;
                rel = *path ? strdup_printf("%s/%s", path, n) : strdup(n);
                if (!rel)
                        return -ENOMEM;
                type = entry_type(d, de);
                if (!*path && !streq(n, "node_modules")) {
                        char *root = strndup(n, strcspn(n, "."));

                        r = root ? strv_push(&s->root_names, root) : -ENOMEM;
                        if (r < 0)
                                return r;
                }
                if (type == DT_DIR) {
                        int sub;

                        if (streq(n, "__pycache__"))
                                continue;
                        if (streq(n, "node_modules")) {
                                r = scan_node_modules(s, dirfd(d), path);
                                if (r < 0)
                                        return r;
                                continue;
                        }
                        sub = openat(dirfd(d), n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (sub < 0)
                                continue;
                        /* A folder is an importable (namespace) package by its name alone. */
                        r = add_own_module(s, n, strlen(n));
                        if (r >= 0)
                                r = scan_dir(s, sub, rel, depth + 1);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (type != DT_REG)
                        continue;
                if (++s->n_files > INFER_FILES_MAX) {
                        s->truncated = true;
                        return 0;
                }
                if ((ext = endswith(n, ".py"))) {
                        struct stat st;

                        r = add_own_module(s, n, ext - n);
                        if (r < 0)
                                return r;
                        if (fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) >= 0 && st.st_size > INFER_FILE_MAX)
                                r = strv_push(&s->too_large, TAKE_PTR(rel));
                        else
                                r = strv_push(&s->python_files, TAKE_PTR(rel));
                        if (r < 0)
                                return r;
                } else if (endswith(n, ".js") || endswith(n, ".mjs") || endswith(n, ".cjs")) {
                        r = strv_push(&s->node_files, TAKE_PTR(rel));
                        if (r < 0)
                                return r;
                } else if ((ext = strstr(n, ".so")) && ext[3] == '\0') {
                        /* Extension modules: "x.cpython-311-x86_64-linux-gnu.so" and "x.so". */
                        r = add_own_module(s, n, strcspn(n, "."));
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* Python scripts without the extension ("#!/usr/bin/env python3" in scripts/). */
static int add_shebang_scripts(Scan *s, int dir_fd) {
        _cleanup_strv_free_ char **scripts = NULL;
        int r;

        r = skill_list_scripts(dir_fd, &scripts);
        if (r < 0)
                return 0;       /* the entry point resolver reports a broken scripts/ */
        STRV_FOREACH(p, scripts) {
                if (endswith(*p, ".py") || strv_contains(s->python_files, *p))
                        continue;
                if (interpreter_for_script(dir_fd, *p) != INTERPRETER_PYTHON)
                        continue;
                r = strv_extend(&s->python_files, *p);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int scan_tree(int dir_fd, Scan *s) {
        int fd, r;

        fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = scan_dir(s, fd, "", 0);
        if (r >= 0)
                r = add_shebang_scripts(s, dir_fd);
        if (r < 0)
                return r;
        strv_sort(s->python_files);
        strv_sort(s->node_files);
        return 0;
}

static SkillDep *find_dep(SkillDeps *d, DepEcosystem e, const char *name, bool inferred) {
        for (size_t i = 0; i < d->n; i++)
                if (d->items[i].ecosystem == e && streq(d->items[i].name, name) &&
                    (d->items[i].origin == DEP_ORIGIN_INFERRED) == inferred)
                        return &d->items[i];
        return NULL;
}

/* One use found in the code: merged into the inferred entry of that name, or a new one. */
static int add_inferred(SkillDeps *d, DepEcosystem e, const char *name, const char *module, const char *file,
                        unsigned line, bool mapped, bool optional, bool vendored) {
        _cleanup_(skill_dep_done) SkillDep x = {
                .ecosystem = e,
                .origin = DEP_ORIGIN_INFERRED,
                .mapped = mapped,
                .optional = optional,
                .vendored = vendored,
        };
        SkillDep *old = find_dep(d, e, name, true);

        if (old) {
                /* Optional only if every use is guarded; vendored if any place finds it. */
                old->optional = old->optional && optional;
                old->vendored = old->vendored || vendored;
                return 0;
        }
        x.name = strdup(name);
        x.module = strdup(module);
        x.where = line > 0 ? strdup_printf("%s:%u", file, line) : strdup(file);
        if (!x.name || !x.module || !x.where)
                return -ENOMEM;
        x.declared = find_dep(d, e, name, false);
        return deps_append(&d->items, &d->n, &x);
}

/* A dotted Python name (import_module() takes any string; anything else cannot be imported). */
static bool module_name_valid(const char *m) {
        if (isempty(m) || m[0] == '.' || strlen(m) > 255)
                return false;
        for (const char *p = m; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                      *p == '_' || *p == '.' || (unsigned char) *p >= 0x80))
                        return false;
        return utf8_is_valid(m, strlen(m));
}

static bool is_own_module(const Scan *s, const char *module) {
        _cleanup_free_ char *top = strndup(module, strcspn(module, "."));

        return top && strv_contains(s->own_modules, top);
}

static int infer_python_result(SkillDeps *d, const Scan *s, const cJSON *out, char **error) {
        const cJSON *imports = cJSON_GetObjectItemCaseSensitive(out, "imports");
        const cJSON *errors = cJSON_GetObjectItemCaseSensitive(out, "errors"), *e;
        int r;

        if (!cJSON_IsArray(imports) || !cJSON_IsArray(errors))
                return error_setf(error, -EBADMSG, "The Python import scan returned no result");
        cJSON_ArrayForEach(e, imports) {
                const cJSON *file = cJSON_GetArrayItem(e, 0), *line = cJSON_GetArrayItem(e, 1),
                        *module = cJSON_GetArrayItem(e, 2), *optional = cJSON_GetArrayItem(e, 3);
                _cleanup_free_ char *top = NULL, *dist = NULL;
                const char *mapped;
                unsigned lineno;

                /* The run's output is an exact tree: numbers are raw tokens. */
                if (!cJSON_IsString(file) || json_exact_get_unsigned(line, &lineno) < 0 ||
                    !cJSON_IsString(module) || isempty(module->valuestring))
                        return error_setf(error, -EBADMSG, "The Python import scan returned a malformed entry");
                if (!module_name_valid(module->valuestring) || is_own_module(s, module->valuestring))
                        continue;
                mapped = dep_python_distribution_for_import(module->valuestring);
                top = strndup(module->valuestring, strcspn(module->valuestring, "."));
                if (!top)
                        return -ENOMEM;
                dist = mapped ? strdup(mapped) : dep_python_normalize(top);
                if (!dist)
                        return -ENOMEM;
                r = add_inferred(d, DEP_ECOSYSTEM_PYTHON, dist, top, file->valuestring,
                                 lineno, mapped,
                                 cJSON_IsTrue(optional), false);
                if (r < 0)
                        return r;
        }
        cJSON_ArrayForEach(e, errors) {
                const cJSON *file = cJSON_GetArrayItem(e, 0), *line = cJSON_GetArrayItem(e, 1),
                        *msg = cJSON_GetArrayItem(e, 2);
                _cleanup_free_ char *shown = NULL;
                unsigned lineno;
                char *u;

                if (!cJSON_IsString(file) || json_exact_get_unsigned(line, &lineno) < 0 ||
                    !cJSON_IsString(msg))
                        return error_setf(error, -EBADMSG, "The Python import scan returned a malformed entry");
                shown = cescape(msg->valuestring);
                u = shown ? strdup_printf("%s:%u: %s", file->valuestring, lineno, shown) : NULL;
                r = u ? strv_push(&d->unparsed, u) : -ENOMEM;
                if (r < 0)
                        return r;
        }
        return 0;
}

static int infer_python(int dir_fd, const SkillDepsOptions *opts, const Scan *s, SkillDeps *d, char **error) {
        _cleanup_(run_result_freep) RunResult *res = NULL;
        _cleanup_(cJSON_Deletep) cJSON *input = NULL;
        _cleanup_free_ char *input_text = NULL, *out_dir = NULL, *run_error = NULL;
        char *interpreter_args[] = { (char *) "-I", (char *) "-S", (char *) "-B", (char *) "-c",
                                     (char *) python_scanner, NULL };
        RunRequest req = RUN_REQUEST_INIT;
        cJSON *files;
        int r;

        if (!s->python_files || !s->python_files[0])
                return 0;

        input = cJSON_CreateObject();
        files = input ? cJSON_AddArrayToObject(input, "files") : NULL;
        if (!files)
                return -ENOMEM;
        STRV_FOREACH(p, s->python_files) {
                cJSON *v = cJSON_CreateString(*p);

                if (!v || !cJSON_AddItemToArray(files, v)) {
                        cJSON_Delete(v);
                        return -ENOMEM;
                }
        }
        input_text = cJSON_PrintUnformatted(input);
        if (!input_text)
                return -ENOMEM;

        r = mkdtemp_malloc("skilld-deps-XXXXXX", &out_dir);
        if (r < 0)
                return error_setf(error, r, "Failed to create a directory for the import scan: %s", strerror(-r));

        req.skill_dir = opts->skill_dir;
        req.skill_dir_fd = dir_fd;
        req.skill_name = "dependency-scan";
        req.script = s->python_files[0];
        req.interpreter = opts->python ?: "/usr/bin/python3";
        req.interpreter_args = interpreter_args;
        req.input_json = input_text;
        req.limits.timeout_usec = INFER_TIMEOUT_USEC;
        req.allow_missing = opts->allow_missing;
        req.uid = opts->uid;
        req.output_dir = out_dir;
        req.backend = opts->backend;
        req.backend_userdata = opts->backend_userdata;

        r = sandbox_run(&req, &res, &run_error);
        (void) rm_rf_at(AT_FDCWD, out_dir);
        if (r < 0)
                return error_setf(error, r, "Failed to scan the Python imports: %s", run_error ?: strerror(-r));
        if (res->status != RUN_STATUS_SUCCEEDED || !cJSON_IsObject(res->output)) {
                const char *why = res->error ?: (res->stderr_stream.size > 0 ? res->stderr_stream.data : NULL);

                return error_setf(error, -EPROTO, "Scanning the Python imports in the sandbox failed (%s)%s%.400s",
                                  run_status_to_string(res->status), why ? ": " : "", strempty(why));
        }
        return infer_python_result(d, s, res->output, error);
}

/* ---- Node ---- */

typedef enum TokenKind {
        TOKEN_NONE,
        TOKEN_WORD,     /* identifier or keyword */
        TOKEN_STRING,   /* '...' or "..." (text kept) */
        TOKEN_PUNCT,    /* one character */
        TOKEN_OTHER,    /* template literal, regex, number */
} TokenKind;

typedef struct Token {
        TokenKind kind;
        const char *start;
        size_t len;
        char punct;
        unsigned line;
} Token;

typedef struct Lexer {
        const char *p, *end;
        unsigned line;
        Token prev;             /* the last significant token, for the regex/division choice */
} Lexer;

static bool ident_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                c == '$' || (unsigned char) c >= 0x80;
}

static bool word_is(const Token *t, const char *w) {
        return t->kind == TOKEN_WORD && t->len == strlen(w) && memcmp(t->start, w, t->len) == 0;
}

/* Whether a '/' after prev starts a regular expression rather than a division. */
static bool regex_allowed(const Token *prev) {
        if (prev->kind == TOKEN_NONE)
                return true;
        if (prev->kind == TOKEN_PUNCT)
                return !strchr(")]}", prev->punct);
        return word_is(prev, "return") || word_is(prev, "typeof") || word_is(prev, "case") ||
                word_is(prev, "do") || word_is(prev, "else") || word_is(prev, "in") || word_is(prev, "of") ||
                word_is(prev, "new") || word_is(prev, "delete") || word_is(prev, "void") ||
                word_is(prev, "throw") || word_is(prev, "yield") || word_is(prev, "await");
}

static void skip_quoted(Lexer *l, char quote) {
        while (l->p < l->end && *l->p != quote) {
                if (*l->p == '\\' && l->p + 1 < l->end)
                        l->p++;
                if (*l->p == '\n') {
                        l->line++;
                        if (quote != '`')
                                return;         /* an unterminated string ends at the line */
                }
                l->p++;
        }
        if (l->p < l->end)
                l->p++;
}

static bool lexer_next(Lexer *l, Token *t) {
        for (;;) {
                const char *p;

                while (l->p < l->end && (*l->p == ' ' || *l->p == '\t' || *l->p == '\r' || *l->p == '\n')) {
                        if (*l->p == '\n')
                                l->line++;
                        l->p++;
                }
                if (l->p >= l->end)
                        return false;
                p = l->p;
                *t = (Token) { .start = p, .line = l->line };

                if (p[0] == '/' && p + 1 < l->end && p[1] == '/') {
                        while (l->p < l->end && *l->p != '\n')
                                l->p++;
                        continue;
                }
                if (p[0] == '/' && p + 1 < l->end && p[1] == '*') {
                        l->p += 2;
                        while (l->p + 1 < l->end && !(l->p[0] == '*' && l->p[1] == '/')) {
                                if (*l->p == '\n')
                                        l->line++;
                                l->p++;
                        }
                        l->p = MIN(l->p + 2, l->end);
                        continue;
                }
                if (p[0] == '#' && p + 1 < l->end && p[1] == '!' && l->prev.kind == TOKEN_NONE) {
                        while (l->p < l->end && *l->p != '\n')
                                l->p++;
                        continue;
                }
                if (*p == '\'' || *p == '"') {
                        l->p++;
                        skip_quoted(l, *p);
                        t->kind = TOKEN_STRING;
                        t->start = p + 1;
                        t->len = l->p > p + 1 && l->p[-1] == *p ? (size_t) (l->p - p - 2) : 0;
                } else if (*p == '`') {
                        l->p++;
                        skip_quoted(l, '`');
                        t->kind = TOKEN_OTHER;
                } else if (*p == '/' && regex_allowed(&l->prev)) {
                        bool cls = false;

                        for (l->p++; l->p < l->end && *l->p != '\n'; l->p++) {
                                if (*l->p == '\\' && l->p + 1 < l->end)
                                        l->p++;
                                else if (*l->p == '[')
                                        cls = true;
                                else if (*l->p == ']')
                                        cls = false;
                                else if (*l->p == '/' && !cls)
                                        break;
                        }
                        if (l->p < l->end && *l->p == '/')
                                l->p++;
                        t->kind = TOKEN_OTHER;
                } else if (ident_char(*p)) {
                        while (l->p < l->end && ident_char(*l->p))
                                l->p++;
                        t->kind = TOKEN_WORD;
                        t->len = l->p - p;
                } else {
                        l->p++;
                        t->kind = TOKEN_PUNCT;
                        t->punct = *p;
                }
                l->prev = *t;
                return true;
        }
}

/* Whether node_modules/<pkg> exists in the file's folder or one above it, as Node looks. */
static bool node_vendored(const Scan *s, const char *file, const char *pkg) {
        _cleanup_free_ char *dir = strdup(file);

        if (!dir)
                return false;
        for (;;) {
                char *slash = strrchr(dir, '/');
                _cleanup_free_ char *want = NULL;

                if (slash)
                        *slash = '\0';
                else
                        dir[0] = '\0';
                want = strdup_printf("%s%snode_modules/%s", dir, *dir ? "/" : "", pkg);
                if (want && strv_contains(s->node_modules, want))
                        return true;
                if (!slash)
                        return false;
        }
}

static int node_specifier(SkillDeps *d, const Scan *s, const char *file, const Token *str) {
        _cleanup_free_ char *spec = strndup(str->start, str->len), *pkg = NULL;

        if (!spec)
                return -ENOMEM;
        pkg = dep_node_package_for_specifier(spec);
        if (!pkg)
                return 0;
        /* The skill root is on NODE_PATH: "lib/x" is the skill's own lib/x.js, unless a
         * node_modules of its own provides a package of that name first. */
        if (strv_contains(s->root_names, pkg) && !node_vendored(s, file, pkg))
                return 0;
        return add_inferred(d, DEP_ECOSYSTEM_NODE, pkg, spec, file, str->line, false, false,
                            node_vendored(s, file, pkg));
}

static int infer_node_file(int dir_fd, SkillDeps *d, const Scan *s, const char *file) {
        _cleanup_free_ char *text = NULL;
        Token t, w1 = {}, w2 = {};     /* the two tokens before t */
        bool in_import = false;
        size_t size;
        Lexer l;
        int r;

        r = read_full_file_at(dir_fd, file, INFER_FILE_MAX, true, &text, &size);
        if (r == -EFBIG) {
                char *u = strdup_printf("%s:0: larger than %u bytes, not scanned", file, INFER_FILE_MAX);

                return u ? strv_push(&d->unparsed, u) : -ENOMEM;
        }
        if (r < 0)
                return 0;

        l = (Lexer) { .p = text, .end = text + size, .line = 1 };
        while (lexer_next(&l, &t)) {
                bool want = false;

                if (t.kind == TOKEN_STRING) {
                        /* require("x"), import("x") */
                        if (w1.kind == TOKEN_PUNCT && w1.punct == '(' &&
                            (word_is(&w2, "require") || word_is(&w2, "import")))
                                want = true;
                        /* import "x" */
                        else if (word_is(&w1, "import"))
                                want = true;
                        /* import ... from "x", export ... from "x" */
                        else if (word_is(&w1, "from") && in_import)
                                want = true;
                }
                if (want) {
                        r = node_specifier(d, s, file, &t);
                        if (r < 0)
                                return r;
                        in_import = false;
                }
                if (word_is(&t, "import") || word_is(&t, "export"))
                        in_import = true;
                else if (t.kind == TOKEN_PUNCT && t.punct == ';')
                        in_import = false;
                w2 = w1;
                w1 = t;
        }
        return 0;
}

static int dep_compare(const void *a, const void *b) {
        const SkillDep *x = a, *y = b;

        if (x->ecosystem != y->ecosystem)
                return x->ecosystem < y->ecosystem ? -1 : 1;
        return strcmp(x->name, y->name);
}

int deps_infer(int dir_fd, const SkillDepsOptions *opts, SkillDeps *d, char **error) {
        _cleanup_(scan_done) Scan s = {};
        size_t first;
        int r;

        r = scan_tree(dir_fd, &s);
        if (r < 0)
                return error_setf(error, r, "Failed to scan the skill's scripts: %s", strerror(-r));
        if (s.truncated) {
                char *u = strdup_printf(".: more than %u files or %u levels, the rest was not scanned",
                                        INFER_FILES_MAX, INFER_DEPTH_MAX);

                r = u ? strv_push(&d->unparsed, u) : -ENOMEM;
                if (r < 0)
                        return r;
        }

        STRV_FOREACH(f, s.too_large) {
                char *u = strdup_printf("%s:0: larger than %u bytes, not scanned", *f, INFER_FILE_MAX);

                r = u ? strv_push(&d->unparsed, u) : -ENOMEM;
                if (r < 0)
                        return r;
        }

        first = d->n;
        r = infer_python(dir_fd, opts, &s, d, error);
        if (r < 0)
                return r;
        STRV_FOREACH(f, s.node_files) {
                r = infer_node_file(dir_fd, d, &s, *f);
                if (r == -E2BIG)
                        return error_setf(error, r, "More than %u dependencies", DEPS_MAX);
                if (r < 0)
                        return r;
        }
        /* Not with nothing found: items may still be NULL, which qsort() must not be given. */
        if (d->n > first)
                qsort(d->items + first, d->n - first, sizeof(SkillDep), dep_compare);
        d->inferred = strv_length(s.python_files) > 0 || strv_length(s.node_files) > 0;
        return 0;
}
