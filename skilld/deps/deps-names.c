/* Names across ecosystems: the table from Python import names to the distributions that provide
 * them, PEP 503 normalization, Node's builtin modules and what package a Node specifier names.
 *
 * The import table lists only the names that differ from their distribution: an import name not
 * found here is taken as the distribution's name ("pypdf" -> pypdf), which is right for most of
 * PyPI. Entries are what skills in the wild import; add to it in sorted order. The resolvers map
 * distribution names on to Debian packages (skilld/env), so nothing Debian-specific belongs here. */
#include <ctype.h>

#include "deps.h"

typedef struct ImportName {
        const char *module;
        const char *distribution;       /* normalized */
} ImportName;

/* Sorted by module (bytewise), looked up with bsearch(). */
static const ImportName import_names[] = {
        { "Bio",                "biopython" },
        { "Crypto",             "pycryptodome" },
        { "Cryptodome",         "pycryptodomex" },
        { "Levenshtein",        "levenshtein" },
        { "MySQLdb",            "mysqlclient" },
        { "OpenSSL",            "pyopenssl" },
        { "PIL",                "pillow" },
        { "PyPDF2",             "pypdf2" },
        { "Xlib",               "python-xlib" },
        { "attr",               "attrs" },
        { "bs4",                "beautifulsoup4" },
        { "cairo",              "pycairo" },
        { "cv2",                "opencv-python" },
        { "dateutil",           "python-dateutil" },
        { "dns",                "dnspython" },
        { "docx",               "python-docx" },
        { "dotenv",             "python-dotenv" },
        { "fitz",               "pymupdf" },
        { "gi",                 "pygobject" },
        { "git",                "gitpython" },
        { "google.protobuf",    "protobuf" },
        { "jose",               "python-jose" },
        { "jwt",                "pyjwt" },
        { "magic",              "python-magic" },
        { "multipart",          "python-multipart" },
        { "nacl",               "pynacl" },
        { "pptx",               "python-pptx" },
        { "serial",             "pyserial" },
        { "skimage",            "scikit-image" },
        { "sklearn",            "scikit-learn" },
        { "slugify",            "python-slugify" },
        { "usb",                "pyusb" },
        { "win32api",           "pywin32" },
        { "yaml",               "pyyaml" },
        { "zmq",                "pyzmq" },
};

/* Node 18-22's require('module').builtinModules without the internal "_" ones. Anything written
 * with the node: scheme is a builtin too (node:test, node:sqlite exist only that way). */
static const char * const node_builtins[] = {
        "assert", "assert/strict", "async_hooks", "buffer", "child_process", "cluster", "console",
        "constants", "crypto", "dgram", "diagnostics_channel", "dns", "dns/promises", "domain",
        "events", "fs", "fs/promises", "http", "http2", "https", "inspector", "inspector/promises",
        "module", "net", "os", "path", "path/posix", "path/win32", "perf_hooks", "process",
        "punycode", "querystring", "readline", "readline/promises", "repl", "stream",
        "stream/consumers", "stream/promises", "stream/web", "string_decoder", "sys", "timers",
        "timers/promises", "tls", "trace_events", "tty", "url", "util", "util/types", "v8", "vm",
        "wasi", "worker_threads", "zlib",
};

static int import_name_compare(const void *key, const void *elem) {
        return strcmp(key, ((const ImportName *) elem)->module);
}

static const char *lookup_import(const char *module) {
        const ImportName *n = bsearch(module, import_names, ELEMENTSOF(import_names), sizeof(ImportName),
                                      import_name_compare);
        return n ? n->distribution : NULL;
}

const char *dep_python_distribution_for_import(const char *module) {
        _cleanup_free_ char *m = NULL;

        if (!module)
                return NULL;
        m = strdup(module);
        if (!m)
                return NULL;
        /* "google.protobuf.json_format": the longest prefix the table knows. */
        for (;;) {
                const char *d = lookup_import(m);
                char *dot;

                if (d)
                        return d;
                dot = strrchr(m, '.');
                if (!dot)
                        return NULL;
                *dot = '\0';
        }
}

char *dep_python_normalize(const char *name) {
        char *out, *t;

        out = malloc(strlen(name) + 1);
        if (!out)
                return NULL;
        t = out;
        for (const char *p = name; *p; p++) {
                if (strchr("-_.", *p)) {
                        if (t == out || t[-1] != '-')
                                *t++ = '-';
                        continue;
                }
                *t++ = (char) tolower((unsigned char) *p);
        }
        *t = '\0';
        return out;
}

bool dep_node_is_builtin(const char *specifier) {
        if (!specifier)
                return false;
        if (startswith(specifier, "node:"))
                return true;
        for (size_t i = 0; i < ELEMENTSOF(node_builtins); i++)
                if (streq(specifier, node_builtins[i]))
                        return true;
        return false;
}

/* npm's rules for new package names, less strict on case (old packages have capitals): 1-214
 * characters of URL-safe ones, not starting with '.' or '_'. */
static bool node_name_part_valid(const char *s, size_t n) {
        if (n == 0 || s[0] == '.' || s[0] == '_')
                return false;
        for (size_t i = 0; i < n; i++)
                if (!(isalnum((unsigned char) s[i]) || strchr("-._~", s[i])))
                        return false;
        return true;
}

bool dep_node_name_is_valid(const char *name) {
        const char *slash;
        size_t n = strlen(name);

        if (n == 0 || n > 214)
                return false;
        if (name[0] != '@')
                return node_name_part_valid(name, n);
        slash = strchr(name, '/');
        if (!slash || strchr(slash + 1, '/'))
                return false;
        return node_name_part_valid(name + 1, slash - name - 1) &&
                node_name_part_valid(slash + 1, strlen(slash + 1));
}

char *dep_node_package_for_specifier(const char *specifier) {
        _cleanup_free_ char *name = NULL;
        const char *end;

        if (isempty(specifier) || dep_node_is_builtin(specifier))
                return NULL;
        /* Relative and absolute paths, URLs (file:, data:, https:) and subpath imports (#x). */
        if (specifier[0] == '.' || specifier[0] == '/' || specifier[0] == '#' || strchr(specifier, ':'))
                return NULL;
        end = strchr(specifier, '/');
        if (specifier[0] == '@')
                end = end ? strchr(end + 1, '/') : NULL;
        name = end ? strndup(specifier, end - specifier) : strdup(specifier);
        if (!name || !dep_node_name_is_valid(name))
                return NULL;
        /* "fs/promises" style subpaths of builtins are caught above; a bare builtin with a subpath
         * that Node does not know ("fs/x") is still Node's, never an npm package. */
        if (dep_node_is_builtin(name))
                return NULL;
        return TAKE_PTR(name);
}
