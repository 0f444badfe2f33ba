/* The session tools: create_session, list_sessions and remove_session.
 *
 * A session keeps /work between runs of one skill (run_skill and exec_skill take its id). The
 * tools are "skillctl session create|list|rm --json" children that runs.c starts and watches like
 * runs, so a session made over MCP is the very one `skillctl session list` shows, embedded with
 * --local or the service's with --system, where the service alone decides whose session is
 * whose. A failure is a tool error quoting skillctl's message and saying which tool helps. */
#include "mcp.h"
#include "output.h"
#include "parse-util.h"

const char *mcp_session_verb(McpRunKind kind) {
        switch (kind) {
        case MCP_RUN_SESSION_CREATE:
                return "create_session";
        case MCP_RUN_SESSION_LIST:
                return "list_sessions";
        case MCP_RUN_SESSION_REMOVE:
                return "remove_session";
        case MCP_RUN_SCRIPT:
        case MCP_RUN_COMMAND:
                break;
        }
        return "run";
}

int mcp_session_prepare(McpServer *s, const cJSON *args, const McpSkill *k, McpRunKind kind, char ***argv,
                        cJSON **ret) {
        const cJSON *ttl = cJSON_GetObjectItemCaseSensitive(args, "ttl");
        const cJSON *quota = cJSON_GetObjectItemCaseSensitive(args, "quota");
        const cJSON *session = cJSON_GetObjectItemCaseSensitive(args, "session");
        uint64_t u;
        int r;

#define TOOL_ERROR(...) ({ *ret = mcp_tool_error(__VA_ARGS__); *ret ? 1 : -ENOMEM; })
#define ARG(x) do { if (strv_extend(argv, (x)) < 0) return -ENOMEM; } while (0)

        r = mcp_child_argv(argv, "session");
        if (r < 0)
                return r;
        ARG(kind == MCP_RUN_SESSION_CREATE ? "create" : kind == MCP_RUN_SESSION_LIST ? "list" : "rm");
        ARG("--json");
        ARG(s->local ? "--local" : "--system");

        switch (kind) {
        case MCP_RUN_SESSION_CREATE:
                if (ttl) {
                        _cleanup_free_ char *value = NULL;

                        /* Seconds as a number, or a duration as skillctl takes it ("2h", "7d"). */
                        if (cJSON_IsNumber(ttl) && ttl->valuedouble >= 1 && ttl->valuedouble <= 1e9 &&
                            ttl->valuedouble == (double) (uint64_t) ttl->valuedouble)
                                value = strdup_printf("%" PRIu64 "s", (uint64_t) ttl->valuedouble);
                        else if (cJSON_IsString(ttl) && parse_sec(ttl->valuestring, &u) >= 0)
                                value = strdup(ttl->valuestring);
                        else
                                return TOOL_ERROR("\"ttl\" must be a number of seconds or a duration such as "
                                                  "\"2h\" or \"7d\" (between 1s and 30d).");
                        if (!value)
                                return -ENOMEM;
                        ARG("--ttl");
                        ARG(value);
                }
                if (quota) {
                        if (!cJSON_IsString(quota) || parse_size(quota->valuestring, &u) < 0)
                                return TOOL_ERROR("\"quota\" must be a size such as \"256M\" or \"1G\".");
                        ARG("--quota");
                        ARG(quota->valuestring);
                }
                ARG("--");
                ARG(k->installed ? k->name : k->dir);
                break;
        case MCP_RUN_SESSION_REMOVE:
                if (!cJSON_IsString(session) || isempty(session->valuestring))
                        return TOOL_ERROR("Missing argument \"session\": the id of a session, as create_session "
                                          "or list_sessions gives it.");
                ARG("--");
                ARG(session->valuestring);
                break;
        case MCP_RUN_SESSION_LIST:
        case MCP_RUN_SCRIPT:
        case MCP_RUN_COMMAND:
                break;
        }
        return 0;
#undef ARG
#undef TOOL_ERROR
}

static void print_session(FILE *f, const cJSON *o) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
        const cJSON *skill = cJSON_GetObjectItemCaseSensitive(o, "skill");
        const cJSON *ttl = cJSON_GetObjectItemCaseSensitive(o, "ttl_usec");
        const cJSON *usage = cJSON_GetObjectItemCaseSensitive(o, "usage_bytes");

        fprintf(f, "- %s: skill %s", cJSON_IsString(id) ? id->valuestring : "?",
                cJSON_IsString(skill) ? skill->valuestring : "?");
        if (cJSON_IsNumber(usage))
                fprintf(f, ", %.0f bytes in /work", usage->valuedouble);
        if (cJSON_IsNumber(ttl))
                fprintf(f, ", expires after %.0f s idle", ttl->valuedouble / 1e6);
        (void) fputc('\n', f);
}

cJSON *mcp_session_answer(McpRunKind kind, char *text, const char *err) {
        _cleanup_(cJSON_Deletep) cJSON *j = NULL, *o = NULL;
        _cleanup_free_ char *summary = NULL;
        const char *key = kind == MCP_RUN_SESSION_LIST ? "sessions" : "removed";
        const cJSON *e;
        size_t size = 0;
        FILE *f;

        j = text ? cJSON_ParseWithOpts(text, NULL, true) : NULL;
        if (!j || !(kind == MCP_RUN_SESSION_CREATE ? cJSON_IsObject(j) : cJSON_IsArray(j)))
                return mcp_tool_error("%s failed: %s%s", mcp_session_verb(kind),
                                      isempty(err) ? "skillctl printed no JSON that it understands" : err,
                                      kind == MCP_RUN_SESSION_CREATE ? "" :
                                      " (list_sessions shows the sessions you can use)");

        f = open_memstream(&summary, &size);
        if (!f)
                return NULL;
        if (kind == MCP_RUN_SESSION_CREATE) {
                (void) fputs("Session created; pass its id as \"session\" to run_skill or exec_skill to keep "
                             "/work between runs, and remove_session it when done:\n", f);
                print_session(f, j);
        } else if (kind == MCP_RUN_SESSION_LIST) {
                fprintf(f, "%d session%s.\n", cJSON_GetArraySize(j), cJSON_GetArraySize(j) == 1 ? "" : "s");
                cJSON_ArrayForEach(e, j) {
                        print_session(f, e);
                }
        } else {
                cJSON_ArrayForEach(e, j) {
                        fprintf(f, "Removed session %s.\n", cJSON_IsString(e) ? e->valuestring : "?");
                }
        }
        if (fclose(f) != 0)
                return NULL;

        /* structuredContent as skillctl printed it (an object; a list goes under its key). */
        cJSON_Minify(text);
        o = cJSON_CreateObject();
        if (!o)
                return NULL;
        if (kind == MCP_RUN_SESSION_CREATE) {
                cJSON_Delete(o);
                o = cJSON_CreateRaw(text);
        } else if (!cJSON_AddItemToObject(o, key, cJSON_CreateRaw(text)))
                return NULL;
        return mcp_tool_result(TAKE_PTR(o), summary, false);
}
