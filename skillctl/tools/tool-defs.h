/* A skill as a tool definition a model API takes, so that a framework without MCP can still
 * offer skills to a model: one definition per skill, its name made fit for the API's rules, its
 * description the skill's, and one parameters schema for every format:
 *
 *   { "type": "object", "properties": {
 *       "input": the input JSON object (stdin, SKILL_INPUT_FILE and SANDBOX_INPUT inside),
 *       "args":  the script's command line arguments,
 *       "files": input files copied into /work, name to base64 content },
 *     "additionalProperties": false }
 *
 * The formats and the shapes they print:
 *   openai            Chat Completions: {"type":"function","function":{name,description,parameters}}
 *   openai-responses  Responses API:    {"type":"function",name,description,parameters}
 *   anthropic         Messages API:     {name,description,input_schema}
 *   mcp               MCP's Tool:       {name,title,description,inputSchema}
 * Names: OpenAI's and Anthropic's ^[a-zA-Z0-9_-]{1,64}$; MCP's 1 to 128 of [A-Za-z0-9_.-]. */
#pragma once

#include <cjson/cJSON.h>

#include "util.h"

typedef enum ToolFormat {
        TOOL_FORMAT_OPENAI,
        TOOL_FORMAT_OPENAI_RESPONSES,
        TOOL_FORMAT_ANTHROPIC,
        TOOL_FORMAT_MCP,
        _TOOL_FORMAT_MAX,
        _TOOL_FORMAT_INVALID = -EINVAL,
} ToolFormat;

const char *tool_format_to_string(ToolFormat f) _pure_;
ToolFormat tool_format_from_string(const char *s) _pure_;

/* name made fit for format's rules: characters outside its set become '_', and it is cut to its
 * longest; an empty name becomes "skill". */
char *tool_name_sanitize(ToolFormat format, const char *name);

/* The parameters schema above (a new object). */
cJSON *tool_parameters_schema(void);

/* The definition of a skill as format's tool. NULL on allocation failure. */
cJSON *tool_definition(ToolFormat format, const char *name, const char *description);
