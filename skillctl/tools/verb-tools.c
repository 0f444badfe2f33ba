/* "skillctl skill tools": the tool definitions of skills (tool-defs.h), ready to hand to a model
 * API: of skill folders and .skill files, of every skill in a folder of skills, or, without
 * arguments, of the skills installed on the host (ListSkills through the service). Loading is the
 * loader's, as for show: safe for the caller and needing no privileges. */
#include <dirent.h>
#include <getopt.h>
#include <sys/stat.h>

#include "bus-client.h"
#include "loader.h"
#include "log.h"
#include "output.h"
#include "skill.h"
#include "tool-defs.h"
#include "verbs.h"

typedef struct ToolList {
        ToolFormat format;
        cJSON *array;
        char **names;                   /* the tool names given out, which must be unique */
} ToolList;

static void tool_list_done(ToolList *l) {
        cJSON_Delete(l->array);
        strv_free(l->names);
}

/* Adds name's definition; a second skill of the same tool name is left out with a warning (an
 * API refuses duplicates, and which one a model would get is anyone's guess). */
static int tool_list_add(ToolList *l, const char *name, const char *description, const char *where) {
        _cleanup_free_ char *tool_name = tool_name_sanitize(l->format, name), *e = NULL;
        cJSON *def;

        if (!tool_name)
                return log_oom();
        if (strv_contains(l->names, tool_name)) {
                e = cescape(where);
                fprintf(stderr, "skillctl: %s: a tool named %s is listed already, left out\n", strna(e),
                        tool_name);
                return 0;
        }
        def = tool_definition(l->format, name, description);
        if (!def || !cJSON_AddItemToArray(l->array, def) || strv_extend(&l->names, tool_name) < 0)
                return cJSON_Delete(def), log_oom();
        return 0;
}

/* A skill folder or .skill file: EXIT_USAGE when it cannot be read, EXIT_INVALID when it is not
 * a skill. */
static int add_skill(ToolList *l, const char *path) {
        LoaderLimits limits = LOADER_LIMITS_DEFAULT;
        _cleanup_(skill_source_freep) SkillSource *source = NULL;
        _cleanup_(skill_freep) Skill *skill = NULL;
        _cleanup_free_ char *error = NULL, *e = cescape(path);
        int r;

        r = skill_source_open(path, &limits, &source, &error);
        if (r >= 0)
                r = skill_load_at(source->dir_fd, &skill, &error);
        if (r < 0) {
                _cleanup_free_ char *why = cescape(error ?: strerror(-r));

                fprintf(stderr, "skillctl: %s: %s\n", strna(e), strna(why));
                return r == -ENOENT || r == -EACCES ? EXIT_USAGE : EXIT_INVALID;
        }
        return tool_list_add(l, skill->name, skill->description, path) < 0 ? EXIT_FAILURE : 0;
}

static int compare_names(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

/* A folder without SKILL.md: each folder in it that has one, by name. Those that are not valid
 * skills are reported and left out, as ListSkills leaves out what does not validate. */
static int add_folder_of_skills(ToolList *l, const char *path) {
        _cleanup_strv_free_ char **found = NULL;
        _cleanup_free_ char *e = cescape(path);
        DIR *d = opendir(path);
        struct dirent *de;
        int r = 0;

        if (!d) {
                fprintf(stderr, "skillctl: %s: %m\n", strna(e));
                return EXIT_USAGE;
        }
        while ((de = readdir(d))) {
                _cleanup_free_ char *md = NULL;

                if (de->d_name[0] == '.')
                        continue;
                md = strdup_printf("%s/%s/SKILL.md", path, de->d_name);
                if (!md || (access(md, F_OK) >= 0 && strv_extend(&found, de->d_name) < 0)) {
                        closedir(d);
                        return log_oom(), EXIT_FAILURE;
                }
        }
        closedir(d);
        if (!found) {
                fprintf(stderr, "skillctl: %s: neither a skill nor a folder of skills (no SKILL.md)\n", strna(e));
                return EXIT_USAGE;
        }
        qsort(found, strv_length(found), sizeof(char *), compare_names);
        STRV_FOREACH(n, found) {
                _cleanup_free_ char *p = strdup_printf("%s/%s", path, *n);

                if (!p)
                        return log_oom(), EXIT_FAILURE;
                r = add_skill(l, p);
                if (r == EXIT_FAILURE)
                        return r;
        }
        return 0;
}

static int add_installed(ToolList *l) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(client_freep) Client *c = NULL;
        const char *name, *description, *hash, *origin;
        int r;

        r = client_open_or_fail(&c);
        if (r != 0)
                return r;
        r = client_call_method(c, SKILLD_BUS_PATH, SKILLD_BUS_MANAGER, "ListSkills", &e, &reply, NULL);
        if (r < 0)
                return client_exit_status(client_log_error("skill tools", &e, r));
        r = sym_sd_bus_message_enter_container(reply, 'a', "(ssss)");
        while (r >= 0 && (r = sym_sd_bus_message_read(reply, "(ssss)", &name, &description, &hash, &origin)) > 0) {
                /* An empty hash: the folder does not validate, and description says why. */
                if (isempty(hash))
                        continue;
                if (tool_list_add(l, name, description, name) < 0)
                        return EXIT_FAILURE;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to parse the skill list: %m"), EXIT_FAILURE;
        return 0;
}

static void tools_help(void) {
        printf("Usage: skillctl skill tools [--format FORMAT] [SKILL...]\n\n"
               "Print tool definitions for skills, one per skill, as a JSON array a model API takes:\n"
               "the skill's name (made fit for the API), its description, and parameters input\n"
               "(the input JSON object), args and files (name to base64 content). SKILL is a skill\n"
               "folder, a .skill file or a folder of skill folders; without SKILL, the skills\n"
               "installed on the host.\n\n"
               "  --format FORMAT   openai (Chat Completions, the default), openai-responses\n"
               "                    (the Responses API), anthropic (Messages API) or mcp (MCP's Tool)\n");
}

int verb_skill_tools(int argc, char *argv[]) {
        static const struct option options[] = {
                { "help",   no_argument,       NULL, 'h' },
                { "format", required_argument, NULL, 'f' },
                {}
        };
        _cleanup_(tool_list_done) ToolList l = { .format = TOOL_FORMAT_OPENAI };
        int c, r, status = 0;

        while ((c = getopt_long(argc, argv, "hf:", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        tools_help();
                        return 0;
                case 'f':
                        l.format = tool_format_from_string(optarg);
                        if (l.format < 0)
                                return usage_error(optarg, "unknown format (openai, openai-responses, anthropic, mcp)");
                        break;
                default:
                        return EXIT_USAGE;
                }

        l.array = cJSON_CreateArray();
        if (!l.array)
                return log_oom(), EXIT_FAILURE;
        if (optind == argc)
                status = add_installed(&l);
        for (int k = optind; k < argc && status != EXIT_FAILURE; k++) {
                _cleanup_free_ char *md = strdup_printf("%s/SKILL.md", argv[k]);
                struct stat st;

                if (!md)
                        return log_oom(), EXIT_FAILURE;
                if (stat(argv[k], &st) >= 0 && S_ISDIR(st.st_mode) && access(md, F_OK) < 0)
                        r = add_folder_of_skills(&l, argv[k]);
                else
                        r = add_skill(&l, argv[k]);
                status = MAX(status, r);
        }
        /* Nothing half printed: the definitions come out only when every skill named was read. */
        if (status != 0)
                return status;
        return json_print(l.array) < 0 ? (log_oom(), EXIT_FAILURE) : 0;
}
