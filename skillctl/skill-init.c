/* "skillctl skill init [--lang py|js|sh] NAME": scaffolds a skill folder ./NAME that lints clean
 * with --strict and runs as it is: a SKILL.md with the frontmatter the specification asks for and
 * a body saying how to use it, and scripts/main.EXT that reads the input JSON and writes output
 * JSON, so the author starts from the contract rather than from a blank page.
 *
 * Nothing is overwritten: an existing NAME is an error. The folder is built under a temporary
 * name beside it and renamed into place, so an interrupted init leaves nothing half-written. */
#include <getopt.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fileio.h"
#include "lint.h"
#include "log.h"
#include "verbs.h"

typedef struct Template {
        const char *lang;
        const char *ext;
        const char *needs;
        const char *script;
} Template;

static const Template templates[] = {
        { "py", "py", "python3 (standard library only)",
          "#!/usr/bin/env python3\n"
          "\"\"\"Reads the input JSON on stdin and writes a greeting as output JSON.\"\"\"\n"
          "import json\n"
          "import sys\n"
          "\n"
          "\n"
          "def main():\n"
          "    text = sys.stdin.read()\n"
          "    data = json.loads(text) if text.strip() else {}\n"
          "    name = data.get(\"name\", \"world\")\n"
          "    json.dump({\"greeting\": f\"Hello, {name}!\"}, sys.stdout)\n"
          "    sys.stdout.write(\"\\n\")\n"
          "\n"
          "\n"
          "if __name__ == \"__main__\":\n"
          "    main()\n" },
        { "js", "js", "node (no packages)",
          "#!/usr/bin/env node\n"
          "// Reads the input JSON on stdin and writes a greeting as output JSON.\n"
          "'use strict';\n"
          "\n"
          "let text = '';\n"
          "process.stdin.setEncoding('utf8');\n"
          "process.stdin.on('data', (chunk) => { text += chunk; });\n"
          "process.stdin.on('end', () => {\n"
          "  const data = text.trim() ? JSON.parse(text) : {};\n"
          "  const name = data.name || 'world';\n"
          "  process.stdout.write(JSON.stringify({ greeting: `Hello, ${name}!` }) + '\\n');\n"
          "});\n" },
        { "sh", "sh", "a POSIX shell",
          "#!/bin/sh\n"
          "# Writes a greeting as output JSON. The input JSON is in $SKILL_INPUT_FILE (and on stdin).\n"
          "set -eu\n"
          "printf '{\"greeting\": \"Hello from %s!\"}\\n' \"$(basename \"$(dirname \"$(dirname \"$0\")\")\")\"\n" },
};

static void help(void) {
        printf("Usage: skillctl skill init [--lang py|js|sh] NAME\n"
               "\n"
               "Create the skill folder ./NAME: a SKILL.md and scripts/main.EXT (default: py) that\n"
               "reads its input JSON and prints output JSON. It passes 'skill lint --strict' and runs\n"
               "with 'skillctl run NAME' from this folder's parent.\n");
}

static int write_file(int dir_fd, const char *path, const char *text, mode_t mode) {
        return write_file_atomic_at(dir_fd, path, text, strlen(text), mode);
}

static int scaffold(int dir_fd, const char *name, const Template *t) {
        _cleanup_free_ char *md = NULL, *script = NULL;
        int r;

        md = strdup_printf("---\n"
                           "name: %s\n"
                           "description: Greets the name given in its input JSON. Replace this with what the skill does and when an agent should use it.\n"
                           "license: MIT\n"
                           "compatibility: Needs %s.\n"
                           "---\n"
                           "\n"
                           "# %s\n"
                           "\n"
                           "Reads an input JSON object such as `{\"name\": \"Ada\"}` (stdin, `SKILL_INPUT_FILE` or\n"
                           "`SANDBOX_INPUT`) and prints `{\"greeting\": \"Hello, Ada!\"}` as its output JSON.\n"
                           "\n"
                           "Run it with `skillctl run %s --input '{\"name\": \"Ada\"}'`.\n",
                           name, t->needs, name, name);
        script = strdup_printf("scripts/main.%s", t->ext);
        if (!md || !script)
                return -ENOMEM;
        r = write_file(dir_fd, "SKILL.md", md, 0644);
        if (r < 0)
                return r;
        if (mkdirat(dir_fd, "scripts", 0755) < 0)
                return -errno;
        return write_file(dir_fd, script, t->script, 0755);
}

int skill_init_main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "help", no_argument,       NULL, 'h' },
                { "lang", required_argument, NULL, 'l' },
                {}
        };
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int dir_fd = -EBADF;
        const Template *t = &templates[0];
        const char *name;
        int c, r;

        while ((c = getopt_long(argc, argv, "hl:", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case 'l':
                        t = NULL;
                        for (size_t i = 0; i < ELEMENTSOF(templates); i++)
                                if (streq(optarg, templates[i].lang))
                                        t = &templates[i];
                        if (!t)
                                return usage_error(optarg, "unknown --lang, expected py, js or sh");
                        break;
                default:
                        return EXIT_USAGE;
                }
        if (optind + 1 != argc)
                return usage_error("skill init", "expects one NAME (try 'skillctl skill init --help')");
        name = argv[optind];
        if (!skill_name_is_valid(name))
                return usage_error(name, "not a skill name: lowercase letters, digits and single hyphens, "
                                         "at most 64, not starting or ending with a hyphen");
        if (access(name, F_OK) >= 0 || errno != ENOENT)
                return usage_error(name, "already exists; choose another name or remove it");

        tmp = strdup_printf(".%s.init-XXXXXX", name);
        if (!tmp)
                return log_oom(), EXIT_FAILURE;
        if (!mkdtemp(tmp))
                return fprintf(stderr, "skillctl: cannot create a folder here: %m\n"), EXIT_FAILURE;
        if (chmod(tmp, 0755) < 0 || (dir_fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
                r = -errno;
                (void) rm_rf_at(AT_FDCWD, tmp);
                return fprintf(stderr, "skillctl: %s: %s\n", tmp, strerror(-r)), EXIT_FAILURE;
        }
        r = scaffold(dir_fd, name, t);
        /* renameat2(RENAME_NOREPLACE): a NAME that appeared meanwhile is not replaced. */
        if (r >= 0 && renameat2(AT_FDCWD, tmp, AT_FDCWD, name, RENAME_NOREPLACE) < 0)
                r = -errno;
        if (r < 0) {
                (void) rm_rf_at(AT_FDCWD, tmp);
                return fprintf(stderr, "skillctl: %s: cannot create the skill: %s\n", name, strerror(-r)),
                       EXIT_FAILURE;
        }
        printf("Created %s/ (SKILL.md, scripts/main.%s). Next:\n"
               "  skillctl skill lint --strict %s\n"
               "  skillctl run %s --input '{\"name\": \"Ada\"}'\n", name, t->ext, name, name);
        return 0;
}
