/* The MCP tools: list_skills, read_skill, run_skill, exec_skill, and create_session,
 * list_sessions and remove_session.
 *
 * Each has an inputSchema and an outputSchema, and every result carries structuredContent
 * matching the latter, failed runs included; a result that could not be had at all (an unknown
 * skill, bad arguments) is a tool error (isError, a text saying what to do) rather than a
 * protocol error, so the model sees it and can correct itself. An unknown tool is -32602. */
#include "log.h"
#include "mcp.h"
#include "output.h"

#define STRING_OR_NULL "{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"null\"}]}"
#define INT_OR_NULL "{\"anyOf\":[{\"type\":\"integer\"},{\"type\":\"null\"}]}"

static const char list_skills_input[] =
        "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}";

#define SKILL_SUMMARY_PROPERTIES                                                                        \
        "\"name\":{\"type\":\"string\",\"description\":\"The skill's name, for read_skill and run_skill\"},"  \
        "\"description\":{\"type\":\"string\",\"description\":\"What the skill does and when to use it\"},"  \
        "\"source\":{\"type\":\"string\",\"description\":\"The folder it was found in, or service:ORIGIN\"}," \
        "\"uri\":" STRING_OR_NULL ","                                                                    \
        "\"files_readable\":{\"type\":\"boolean\"}"

static const char list_skills_output[] =
        "{\"type\":\"object\",\"required\":[\"skills\"],\"properties\":{\"skills\":{\"type\":\"array\","
        "\"items\":{\"type\":\"object\",\"required\":[\"name\",\"description\",\"source\",\"uri\",\"files_readable\"],"
        "\"properties\":{" SKILL_SUMMARY_PROPERTIES "}}}}}";

static const char read_skill_input[] =
        "{\"type\":\"object\",\"required\":[\"skill\"],\"additionalProperties\":false,\"properties\":{"
        "\"skill\":{\"type\":\"string\",\"description\":\"The skill's name, as list_skills gives it\"}}}";

static const char read_skill_output[] =
        "{\"type\":\"object\",\"required\":[\"name\",\"description\",\"source\",\"uri\",\"files_readable\","
        "\"frontmatter\",\"body\",\"files\"],\"properties\":{" SKILL_SUMMARY_PROPERTIES ","
        "\"frontmatter\":{\"type\":\"object\"},"
        "\"body\":" STRING_OR_NULL ","
        "\"files\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"path\",\"size\",\"uri\"],"
        "\"properties\":{\"path\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"},\"uri\":{\"type\":\"string\"}}}}}}";

/* What run_skill and exec_skill share: the input, the files, a session and the limits. */
#define RUN_COMMON_PROPERTIES                                                                           \
        "\"skill\":{\"type\":\"string\",\"description\":\"The skill's name, as list_skills gives it\"},"          \
        "\"input\":{\"type\":\"object\",\"description\":\"Input JSON: the program's stdin and $SKILL_INPUT_FILE\"}," \
        "\"files\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\",\"contentEncoding\":\"base64\"}," \
        "\"description\":\"Input files for the working directory: file name to base64 content\"},"            \
        "\"session\":{\"type\":\"string\",\"description\":\"A session id from create_session: /work is kept "     \
        "between the runs in it\"},"                                                                       \
        "\"timeout\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"description\":\"Wall clock limit in seconds (default 60)\"}," \
        "\"memory\":{\"type\":\"string\",\"description\":\"Memory limit, e.g. 256M (default 512M)\"},"          \
        "\"cpu\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"CPU limit in percent of one CPU (default 100)\"}," \
        "\"tasks\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"Process and thread limit (default 256)\"}"

static const char run_skill_input[] =
        "{\"type\":\"object\",\"required\":[\"skill\"],\"additionalProperties\":false,\"properties\":{"
        "\"script\":{\"type\":\"string\",\"description\":\"Script to run, relative to the skill (default: its entry point)\"},"
        "\"args\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"Arguments for the script\"},"
        RUN_COMMON_PROPERTIES "}}";

static const char exec_skill_input[] =
        "{\"type\":\"object\",\"required\":[\"skill\",\"command\"],\"additionalProperties\":false,\"properties\":{"
        "\"command\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"minItems\":1,"
        "\"description\":\"The program and its arguments, run as given (no shell unless it names one), e.g. "
        "[\\\"python3\\\", \\\"-m\\\", \\\"scripts.tool\\\", \\\"ARG\\\"]\"},"
        "\"cwd\":{\"type\":\"string\",\"enum\":[\"/work\",\"/skill\"],\"description\":\"Working directory: /work "
        "(the default; input files are there) or /skill (the skill's root, read-only)\"},"
        RUN_COMMON_PROPERTIES "}}";

#define SESSION_PROPERTIES                                                                              \
        "\"id\":{\"type\":\"string\",\"description\":\"For run_skill's and exec_skill's session\"},"            \
        "\"skill\":{\"type\":\"string\"},"                                                                 \
        "\"owner\":{\"type\":\"integer\"},"                                                                \
        "\"created_usec\":{\"type\":\"integer\"},"                                                         \
        "\"used_usec\":{\"type\":\"integer\"},"                                                            \
        "\"ttl_usec\":{\"type\":\"integer\",\"description\":\"Idle time until it expires\"},"                    \
        "\"expires_usec\":{\"type\":\"integer\"},"                                                         \
        "\"quota_bytes\":{\"type\":\"integer\"},"                                                          \
        "\"usage_bytes\":{\"type\":\"integer\"}"
#define SESSION_SCHEMA "{\"type\":\"object\",\"required\":[\"id\",\"skill\"],\"properties\":{" SESSION_PROPERTIES "}}"

static const char create_session_input[] =
        "{\"type\":\"object\",\"required\":[\"skill\"],\"additionalProperties\":false,\"properties\":{"
        "\"skill\":{\"type\":\"string\",\"description\":\"The skill's name, as list_skills gives it\"},"
        "\"ttl\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"integer\",\"minimum\":1}],"
        "\"description\":\"Idle time until it expires: seconds, or a duration such as 2h or 7d (default 24h)\"},"
        "\"quota\":{\"type\":\"string\",\"description\":\"The most its /work holds, e.g. 1G (default 256M)\"}}}";

static const char create_session_output[] = SESSION_SCHEMA;

static const char list_sessions_output[] =
        "{\"type\":\"object\",\"required\":[\"sessions\"],\"properties\":{\"sessions\":{\"type\":\"array\","
        "\"items\":" SESSION_SCHEMA "}}}";

static const char remove_session_input[] =
        "{\"type\":\"object\",\"required\":[\"session\"],\"additionalProperties\":false,\"properties\":{"
        "\"session\":{\"type\":\"string\",\"description\":\"The session's id\"}}}";

static const char remove_session_output[] =
        "{\"type\":\"object\",\"required\":[\"removed\"],\"properties\":{\"removed\":{\"type\":\"array\","
        "\"items\":{\"type\":\"string\"}}}}";

/* The result of a run, as result.json and the service's Result property have it. */
static const char run_skill_output[] =
        "{\"type\":\"object\",\"required\":[\"run_id\",\"skill\",\"status\",\"exit_code\",\"output\",\"artifacts\"],"
        "\"properties\":{"
        "\"run_id\":{\"type\":\"string\"},"
        "\"skill\":" STRING_OR_NULL ","
        "\"skill_hash\":" STRING_OR_NULL ","
        "\"script\":" STRING_OR_NULL ","
        "\"status\":{\"type\":\"string\",\"enum\":[\"succeeded\",\"failed\",\"timeout\",\"oom\",\"tasks\",\"signal\","
        "\"seccomp\",\"output-limit\",\"error\",\"canceled\",\"interrupted\",\"queued\",\"running\"]},"
        "\"exit_code\":" INT_OR_NULL ","
        "\"signal\":" INT_OR_NULL ","
        "\"signal_name\":" STRING_OR_NULL ","
        "\"error\":" STRING_OR_NULL ","
        "\"output\":{\"description\":\"The JSON the skill wrote (output.json or stdout), exactly\"},"
        "\"output_source\":" STRING_OR_NULL ","
        "\"stdout\":{\"type\":\"object\"},"
        "\"stderr\":{\"type\":\"object\"},"
        "\"artifacts\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"path\",\"type\"],"
        "\"properties\":{\"path\":{\"type\":\"string\"},\"type\":{\"type\":\"string\",\"enum\":[\"file\",\"directory\"]},"
        "\"size\":{\"type\":\"integer\"},\"sha256\":{\"type\":\"string\"}}}},"
        "\"usage\":{\"type\":\"object\"},"
        "\"limits\":{\"type\":\"object\"}}}";

static const struct {
        const char *name, *title, *description, *input, *output;
        bool read_only;
} tools[] = {
        {
                "list_skills", "List skills",
                "List the Agent Skills available: name, description and where each comes from. "
                "Use read_skill for a skill's instructions before using it.",
                list_skills_input, list_skills_output, true,
        },
        {
                "read_skill", "Read a skill",
                "Read a skill's instructions (the SKILL.md body), its frontmatter and the list of its files "
                "(readable as skill://NAME/PATH resources). Follow the instructions; many skills need no script.",
                read_skill_input, read_skill_output, true,
        },
        {
                "run_skill", "Run a skill's script in a sandbox",
                "Run a script of a skill in an isolated sandbox (no network, a private file system, limits on "
                "time, memory and processes) with optional arguments, input JSON and input files. Returns the "
                "run's result: status, exit code, the JSON the script wrote as output, its stdout/stderr and "
                "its artifacts (files it left in $SKILL_OUTPUT_DIR, returned as resource links).",
                run_skill_input, run_skill_output, false,
        },
        {
                "exec_skill", "Run a command in a skill's sandbox",
                "Run a command line the way a skill's instructions say to (\"python3 -m scripts.tool ARG\", "
                "\"node scripts/x.js\") in the same sandbox as run_skill: the skill is /skill (read-only, on "
                "Python's and Node's module path), the working directory /work (or /skill with cwd). No shell "
                "unless the command names one. Returns the same result as run_skill.",
                exec_skill_input, run_skill_output, false,
        },
        {
                "create_session", "Create a session",
                "Create a session of a skill: its /work is kept between the run_skill and exec_skill calls "
                "given its id as \"session\" (nothing else is: /tmp and processes are fresh each run). It "
                "expires after its idle ttl; remove it with remove_session when done.",
                create_session_input, create_session_output, false,
        },
        {
                "list_sessions", "List sessions",
                "List your sessions: id, skill, usage of /work and when each expires.",
                list_skills_input, list_sessions_output, true,
        },
        {
                "remove_session", "Remove a session",
                "Remove a session and everything in its /work.",
                remove_session_input, remove_session_output, false,
        },
};

int mcp_tools_list(McpServer *s, const JsonRpcMessage *m, cJSON **ret, JsonRpcError *ret_error) {
        _cleanup_(cJSON_Deletep) cJSON *o = cJSON_CreateObject();
        cJSON *arr;

        if (!o || !(arr = cJSON_AddArrayToObject(o, "tools")))
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(tools); i++) {
                cJSON *t = cJSON_CreateObject(), *a;

                if (!t || !cJSON_AddItemToArray(arr, t) || !cJSON_AddStringToObject(t, "name", tools[i].name) ||
                    !cJSON_AddStringToObject(t, "title", tools[i].title) ||
                    !cJSON_AddStringToObject(t, "description", tools[i].description) ||
                    !cJSON_AddItemToObject(t, "inputSchema", cJSON_Parse(tools[i].input)) ||
                    !cJSON_AddItemToObject(t, "outputSchema", cJSON_Parse(tools[i].output)) ||
                    !(a = cJSON_AddObjectToObject(t, "annotations")) ||
                    !cJSON_AddBoolToObject(a, "readOnlyHint", tools[i].read_only) ||
                    !cJSON_AddBoolToObject(a, "openWorldHint", false))
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(o);
        return 0;
}

static int add_summary(cJSON *o, const McpSkill *k) {
        _cleanup_free_ char *uri = k->dir ? mcp_skill_uri(k->name, "SKILL.md") : NULL;

        if ((k->dir && !uri) || !cJSON_AddStringToObject(o, "name", k->name) ||
            !cJSON_AddStringToObject(o, "description", k->description) ||
            !cJSON_AddStringToObject(o, "source", k->source) ||
            !cJSON_AddItemToObject(o, "uri", uri ? cJSON_CreateString(uri) : cJSON_CreateNull()) ||
            !cJSON_AddBoolToObject(o, "files_readable", k->dir != NULL))
                return -ENOMEM;
        return 0;
}

/* A tool result: structuredContent, and text for clients that show only content. */
cJSON *mcp_tool_result(cJSON *structured, const char *text, bool is_error) {
        cJSON *o = cJSON_CreateObject(), *content, *t;

        if (!o || !structured || !cJSON_AddItemToObject(o, "structuredContent", structured)) {
                cJSON_Delete(structured);
                return cJSON_Delete(o), NULL;
        }
        if (!(content = cJSON_AddArrayToObject(o, "content")) || !(t = cJSON_CreateObject()) ||
            !cJSON_AddItemToArray(content, t) || !cJSON_AddStringToObject(t, "type", "text") ||
            !cJSON_AddStringToObject(t, "text", text) || !cJSON_AddBoolToObject(o, "isError", is_error))
                return cJSON_Delete(o), NULL;
        return o;
}

static int tool_list_skills(McpServer *s, const cJSON *args, cJSON **ret) {
        _cleanup_(mcp_catalog_done) McpCatalog c = {};
        _cleanup_(cJSON_Deletep) cJSON *o = cJSON_CreateObject();
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f;
        cJSON *arr;
        int r;

        r = mcp_catalog_load(s, &c);
        if (r < 0)
                return r;
        if (!o || !(arr = cJSON_AddArrayToObject(o, "skills")))
                return -ENOMEM;
        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < c.n; i++) {
                cJSON *e = cJSON_CreateObject();

                if (!e || !cJSON_AddItemToArray(arr, e) || add_summary(e, &c.skills[i]) < 0) {
                        (void) fclose(f);
                        return -ENOMEM;
                }
                fprintf(f, "- %s: %s\n", c.skills[i].name, c.skills[i].description);
        }
        if (c.n == 0)
                (void) fputs("No skills found. Put skill folders in ~/.agents/skills or pass --skills-dir.\n", f);
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = mcp_tool_result(TAKE_PTR(o), text, false);
        return *ret ? 0 : -ENOMEM;
}

static const McpSkill *find_skill(const McpCatalog *c, const cJSON *args, cJSON **ret) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(args, "skill");
        const McpSkill *k;

        if (!cJSON_IsString(name)) {
                *ret = mcp_tool_error("Missing argument \"skill\": the name of a skill, as list_skills gives it.");
                return NULL;
        }
        k = mcp_catalog_find(c, name->valuestring);
        if (!k)
                *ret = mcp_tool_error("Unknown skill \"%s\": list_skills shows the skills available.",
                                      name->valuestring);
        return k;
}

static int tool_read_skill(McpServer *s, const cJSON *args, cJSON **ret) {
        _cleanup_(mcp_catalog_done) McpCatalog c = {};
        _cleanup_(cJSON_Deletep) cJSON *o = NULL;
        _cleanup_(skill_freep) Skill *skill = NULL;
        _cleanup_free_ char *error = NULL, *text = NULL;
        McpFile *files = NULL;
        size_t n_files = 0, size = 0;
        const McpSkill *k;
        cJSON *arr;
        FILE *f;
        int r;

        r = mcp_catalog_load(s, &c);
        if (r < 0)
                return r;
        k = find_skill(&c, args, ret);
        if (!k)
                return *ret ? 0 : -ENOMEM;

        if (k->dir) {
                r = mcp_skill_load(k, &skill, &error);
                if (r >= 0)
                        r = mcp_skill_files(k, false, &files, &n_files, &error);
                if (r < 0) {
                        *ret = mcp_tool_error("Cannot read skill %s: %s", k->name, error ?: strerror(-r));
                        return *ret ? 0 : -ENOMEM;
                }
        }

        o = cJSON_CreateObject();
        f = open_memstream(&text, &size);
        if (!o || !f || add_summary(o, k) < 0 ||
            !cJSON_AddItemToObject(o, "frontmatter", skill ? mcp_frontmatter_json(skill) : cJSON_CreateObject()) ||
            !cJSON_AddItemToObject(o, "body", skill ? cJSON_CreateString(strempty(skill->body)) : cJSON_CreateNull()) ||
            !(arr = cJSON_AddArrayToObject(o, "files"))) {
                if (f)
                        (void) fclose(f);
                mcp_files_free(files, n_files);
                return -ENOMEM;
        }
        fprintf(f, "# Skill %s\n\n%s\n", k->name, k->description);
        if (skill)
                fprintf(f, "\n%s\n", strempty(skill->body));
        else
                fprintf(f, "\nThis skill is installed on the skilld service: run it with run_skill; its "
                        "instructions are not readable here.\n");
        if (n_files > 0)
                fprintf(f, "\nFiles (resources skill://%s/PATH):\n", k->name);
        for (size_t i = 0; i < n_files; i++) {
                _cleanup_free_ char *uri = mcp_skill_uri(k->name, files[i].path);
                cJSON *e = cJSON_CreateObject();

                if (!uri || !e || !cJSON_AddItemToArray(arr, e) ||
                    !cJSON_AddStringToObject(e, "path", files[i].path) ||
                    !cJSON_AddItemToObject(e, "size", json_u64(files[i].size)) ||
                    !cJSON_AddStringToObject(e, "uri", uri)) {
                        (void) fclose(f);
                        mcp_files_free(files, n_files);
                        return -ENOMEM;
                }
                fprintf(f, "- %s (%" PRIu64 " bytes)\n", files[i].path, files[i].size);
        }
        mcp_files_free(files, n_files);
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = mcp_tool_result(TAKE_PTR(o), text, false);
        return *ret ? 0 : -ENOMEM;
}

int mcp_tools_call(McpServer *s, const JsonRpcMessage *m, cJSON **ret, JsonRpcError *ret_error) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(m->params, "name");
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(m->params, "arguments");
        _cleanup_(cJSON_Deletep) cJSON *empty = NULL;
        _cleanup_(mcp_catalog_done) McpCatalog c = {};
        const McpSkill *k;
        McpRunKind kind;
        int r;

        if (!cJSON_IsString(name))
                return mcp_error(ret_error, JSONRPC_INVALID_PARAMS, "Invalid params: tools/call needs \"name\"");
        if (args && !cJSON_IsObject(args))
                return mcp_error(ret_error, JSONRPC_INVALID_PARAMS,
                                 "Invalid params: \"arguments\" must be an object");
        if (!args) {
                args = empty = cJSON_CreateObject();
                if (!empty)
                        return -ENOMEM;
        }

        if (streq(name->valuestring, "list_skills"))
                return tool_list_skills(s, args, ret);
        if (streq(name->valuestring, "read_skill"))
                return tool_read_skill(s, args, ret);
        if (streq(name->valuestring, "list_sessions"))
                return mcp_run_start(s, m, args, NULL, MCP_RUN_SESSION_LIST, ret);
        if (streq(name->valuestring, "remove_session"))
                return mcp_run_start(s, m, args, NULL, MCP_RUN_SESSION_REMOVE, ret);
        if (streq(name->valuestring, "run_skill"))
                kind = MCP_RUN_SCRIPT;
        else if (streq(name->valuestring, "exec_skill"))
                kind = MCP_RUN_COMMAND;
        else if (streq(name->valuestring, "create_session"))
                kind = MCP_RUN_SESSION_CREATE;
        else
                return mcp_error(ret_error, JSONRPC_INVALID_PARAMS, "Unknown tool: %s", name->valuestring);

        r = mcp_catalog_load(s, &c);
        if (r < 0)
                return r;
        k = find_skill(&c, args, ret);
        if (!k)
                return *ret ? 0 : -ENOMEM;
        return mcp_run_start(s, m, args, k, kind, ret);
}
