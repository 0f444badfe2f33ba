/* The MCP tools: list_skills, read_skill and run_skill.
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

static const char run_skill_input[] =
        "{\"type\":\"object\",\"required\":[\"skill\"],\"additionalProperties\":false,\"properties\":{"
        "\"skill\":{\"type\":\"string\",\"description\":\"The skill's name, as list_skills gives it\"},"
        "\"script\":{\"type\":\"string\",\"description\":\"Script to run, relative to the skill (default: its entry point)\"},"
        "\"args\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"Arguments for the script\"},"
        "\"input\":{\"type\":\"object\",\"description\":\"Input JSON: the script's stdin and $SKILL_INPUT_FILE\"},"
        "\"files\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\",\"contentEncoding\":\"base64\"},"
        "\"description\":\"Input files for the working directory: file name to base64 content\"},"
        "\"timeout\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"description\":\"Wall clock limit in seconds (default 60)\"},"
        "\"memory\":{\"type\":\"string\",\"description\":\"Memory limit, e.g. 256M (default 512M)\"},"
        "\"cpu\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"CPU limit in percent of one CPU (default 100)\"},"
        "\"tasks\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"Process and thread limit (default 256)\"}}}";

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
static cJSON *tool_result(cJSON *structured, const char *text, bool is_error) {
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
                        fclose(f);
                        return -ENOMEM;
                }
                fprintf(f, "- %s: %s\n", c.skills[i].name, c.skills[i].description);
        }
        if (c.n == 0)
                fputs("No skills found. Put skill folders in ~/.agents/skills or pass --skills-dir.\n", f);
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = tool_result(TAKE_PTR(o), text, false);
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
                        fclose(f);
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
                        fclose(f);
                        mcp_files_free(files, n_files);
                        return -ENOMEM;
                }
                fprintf(f, "- %s (%" PRIu64 " bytes)\n", files[i].path, files[i].size);
        }
        mcp_files_free(files, n_files);
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = tool_result(TAKE_PTR(o), text, false);
        return *ret ? 0 : -ENOMEM;
}

int mcp_tools_call(McpServer *s, const JsonRpcMessage *m, cJSON **ret, JsonRpcError *ret_error) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(m->params, "name");
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(m->params, "arguments");
        _cleanup_(cJSON_Deletep) cJSON *empty = NULL;
        _cleanup_(mcp_catalog_done) McpCatalog c = {};
        const McpSkill *k;
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
        if (!streq(name->valuestring, "run_skill"))
                return mcp_error(ret_error, JSONRPC_INVALID_PARAMS, "Unknown tool: %s", name->valuestring);

        r = mcp_catalog_load(s, &c);
        if (r < 0)
                return r;
        k = find_skill(&c, args, ret);
        if (!k)
                return *ret ? 0 : -ENOMEM;
        return mcp_run_start(s, m, args, k, ret);
}
