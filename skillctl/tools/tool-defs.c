/* See tool-defs.h. */
#include "json-exact.h"
#include "string-table.h"
#include "tool-defs.h"

static const char *const format_table[_TOOL_FORMAT_MAX] = {
        [TOOL_FORMAT_OPENAI]           = "openai",
        [TOOL_FORMAT_OPENAI_RESPONSES] = "openai-responses",
        [TOOL_FORMAT_ANTHROPIC]        = "anthropic",
        [TOOL_FORMAT_MCP]              = "mcp",
};

DEFINE_STRING_TABLE_LOOKUP(tool_format, ToolFormat, format_table);

char *tool_name_sanitize(ToolFormat format, const char *name) {
        size_t max = format == TOOL_FORMAT_MCP ? 128 : 64, n = MIN(strlen(strempty(name)), max);
        char *s;

        if (n == 0)
                return strdup("skill");
        s = strndup(name, n);
        if (!s)
                return NULL;
        /* One '_' for each character out of the set: a UTF-8 sequence's continuation bytes go. */
        char *w = s;
        for (const char *p = s; *p; p++) {
                char ch = *p;
                bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                          ch == '_' || ch == '-' || (ch == '.' && format == TOOL_FORMAT_MCP);

                if (((unsigned char) ch & 0xc0) == 0x80)
                        continue;
                *w++ = ok ? ch : '_';
        }
        *w = '\0';
        return s;
}

static cJSON *typed(const char *type, const char *description) {
        cJSON *o = cJSON_CreateObject();

        if (o && (json_attach(o, "type", cJSON_CreateString(type)) < 0 ||
                  json_attach(o, "description", cJSON_CreateString(description)) < 0))
                return cJSON_Delete(o), NULL;
        return o;
}

cJSON *tool_parameters_schema(void) {
        cJSON *schema = typed("object", "How to run the skill; every member is optional."),
              *props = cJSON_CreateObject(), *input, *args, *files;

        /* props goes with a schema that could not be made. */
        if (json_attach(schema, "properties", props) < 0)
                return cJSON_Delete(schema), NULL;
        input = typed("object", "The input JSON object. The skill reads it on stdin, in the file named by "
                                "SKILL_INPUT_FILE and in SANDBOX_INPUT; its SKILL.md says what it expects.");
        args = typed("array", "Command line arguments for the skill's script.");
        files = typed("object", "Input files copied into the skill's working directory: "
                                "file name to its content in base64.");
        if (json_attach(props, "input", input) < 0 || json_attach(props, "args", args) < 0 ||
            json_attach(props, "files", files) < 0 ||
            json_attach(args, "items", typed("string", "One argument.")) < 0 ||
            json_attach(files, "additionalProperties",
                        typed("string", "The file's content, base64-encoded.")) < 0 ||
            json_attach(schema, "additionalProperties", cJSON_CreateFalse()) < 0)
                return cJSON_Delete(schema), NULL;
        return schema;
}

cJSON *tool_definition(ToolFormat format, const char *name, const char *description) {
        _cleanup_free_ char *tool_name = tool_name_sanitize(format, name);
        cJSON *def = cJSON_CreateObject(), *body = def;

        if (!def || !tool_name)
                return cJSON_Delete(def), NULL;
        switch (format) {
        case TOOL_FORMAT_OPENAI:
        case TOOL_FORMAT_OPENAI_RESPONSES:
                /* Chat Completions nests the function under "function"; the Responses API does not. */
                if (json_attach(def, "type", cJSON_CreateString("function")) < 0 ||
                    (format == TOOL_FORMAT_OPENAI &&
                     json_attach(def, "function", body = cJSON_CreateObject()) < 0) ||
                    json_attach(body, "name", cJSON_CreateString(tool_name)) < 0 ||
                    json_attach(body, "description", cJSON_CreateString(strempty(description))) < 0 ||
                    json_attach(body, "parameters", tool_parameters_schema()) < 0)
                        return cJSON_Delete(def), NULL;
                return def;
        case TOOL_FORMAT_ANTHROPIC:
                if (json_attach(def, "name", cJSON_CreateString(tool_name)) < 0 ||
                    json_attach(def, "description", cJSON_CreateString(strempty(description))) < 0 ||
                    json_attach(def, "input_schema", tool_parameters_schema()) < 0)
                        return cJSON_Delete(def), NULL;
                return def;
        case TOOL_FORMAT_MCP:
                /* The title is for people: the skill's own name, unsanitized. */
                if (json_attach(def, "name", cJSON_CreateString(tool_name)) < 0 ||
                    json_attach(def, "title", cJSON_CreateString(strempty(name))) < 0 ||
                    json_attach(def, "description", cJSON_CreateString(strempty(description))) < 0 ||
                    json_attach(def, "inputSchema", tool_parameters_schema()) < 0)
                        return cJSON_Delete(def), NULL;
                return def;
        case _TOOL_FORMAT_MAX:
        case _TOOL_FORMAT_INVALID:
        default:
                return cJSON_Delete(def), NULL;
        }
}
