/* "skillctl mcp": what the files of the MCP server share.
 *
 *   jsonrpc.c    framing and decoding of JSON-RPC lines, the exact JSON text of values
 *   server.c     the event loop, the MCP lifecycle (initialize, ping) and method dispatch
 *   catalog.c    which skills are offered: the skill folders and the service's installed ones
 *   encode.c     resource URIs, base64, media types
 *   tools.c      the tools: list_skills, read_skill, run_skill, exec_skill and the session ones
 *   runs.c       runs of run_skill and exec_skill: a child "skillctl run|exec --json", progress,
 *                cancellation; the session tools' children too
 *   sessions.c   create_session, list_sessions, remove_session: "skillctl session ... --json"
 *   resources.c  resources/list, read: skill files as skill://NAME/PATH, artifacts of runs
 *   skills-ext.c the SEP-2640 skills extension: skills/list, skills/get
 *
 * The server is single-threaded on one sd-event loop: stdin, every run's child and timers. */
#pragma once

#include <cjson/cJSON.h>

#include "bus-client.h"
#include "jsonrpc.h"
#include "mcp-encode.h"
#include "skill.h"

#define MCP_PROTOCOL_VERSION "2025-11-25"
#define MCP_SKILLS_EXTENSION "io.modelcontextprotocol/skills"
/* How often a run with a progress token reports that it still goes. */
#define MCP_HEARTBEAT_USEC (1ULL * 1000 * 1000)
/* Runs going at once for one client: each is a sandbox (or a slot of the service's). */
#define MCP_RUNS_MAX 16U
/* Ended runs whose artifacts stay readable; the oldest go first. */
#define MCP_KEPT_RUNS_MAX 64U
/* What resources/read hands out in one piece. */
#define MCP_RESOURCE_MAX (32U * 1024U * 1024U)

typedef struct McpServer McpServer;
typedef struct McpRun McpRun;

/* One skill offered: a folder here, or one the service has installed. */
typedef struct McpSkill {
        char *name;
        char *description;
        char *dir;                      /* absolute folder; NULL where its files are not readable */
        char *source;                   /* the folder searched, or "service:ORIGIN" */
        bool installed;                 /* the service's: runs by name (io.skilld.run) */
} McpSkill;

typedef struct McpCatalog {
        McpSkill *skills;
        size_t n;
} McpCatalog;

void mcp_catalog_done(McpCatalog *c);
/* Looks at every search folder, then asks the service; first name wins. */
int mcp_catalog_load(McpServer *s, McpCatalog *ret);
const McpSkill *mcp_catalog_find(const McpCatalog *c, const char *name);

/* A skill folder's files, sorted, excluded paths left out. */
typedef struct McpFile {
        char *path;
        uint64_t size;
        char sha256[65];                /* filled by mcp_skill_files() with hashes */
} McpFile;

void mcp_files_free(McpFile *f, size_t n);
int mcp_skill_files(const McpSkill *k, bool hashes, McpFile **ret, size_t *ret_n, char **error);
/* Parses the SKILL.md of a folder skill. */
int mcp_skill_load(const McpSkill *k, Skill **ret, char **error);
/* The frontmatter as JSON, as a YAML 1.2 reader (js-yaml, PyYAML's safe loader) sees it. */
cJSON *mcp_frontmatter_json(const Skill *k);
/* Reads one file of a folder skill (no symlinks followed); -ENOENT, -EFBIG, -EINVAL. */
int mcp_skill_read(const McpSkill *k, const char *path, char **ret, size_t *ret_size);

typedef struct McpKept {
        char *run_id;
        char *dir;                      /* the run's output directory (files/ holds the artifacts) */
} McpKept;

struct McpServer {
        sd_event *event;
        sd_event_source *stdin_source;
        LineReader reader;
        bool initialized;
        char **search_dirs;             /* in order; --skills-dir ones first */
        bool local;                     /* runs embedded; no installed skills */
        bool system;                    /* --system */
        Client *client;                 /* the service, when it answers */
        char *work_dir;                 /* private: the runs' inputs and outputs */
        char *self;                     /* our executable, which runs skills as "skillctl run" */
        McpRun *runs;
        McpKept kept[MCP_KEPT_RUNS_MAX];
        size_t n_kept;
        unsigned n_runs_started;
        bool stdin_closed;
        bool stopping;
};

/* Sends one line (a formatted message with its newline), taking it. */
int mcp_send(McpServer *s, char *line);
/* Ends the loop once stdin closed (or a signal came) and no run is left. */
void mcp_maybe_exit(McpServer *s);
int mcp_send_result(McpServer *s, const char *id, cJSON *result);
int mcp_send_error(McpServer *s, const char *id, int code, const char *message);

/* Method handlers: 0 with *ret (the result, sent as the answer), 1 when the answer comes later
 * (the handler keeps the id), -EBADMSG with *ret_error, other negative errno: internal error. */
typedef int (*mcp_method_t)(McpServer *s, const JsonRpcMessage *m, cJSON **ret, JsonRpcError *ret_error);

int mcp_tools_list(McpServer *s, const JsonRpcMessage *m, cJSON **ret, JsonRpcError *ret_error);
int mcp_tools_call(McpServer *s, const JsonRpcMessage *m, cJSON **ret, JsonRpcError *ret_error);
int mcp_resources_list(McpServer *s, const JsonRpcMessage *m, cJSON **ret, JsonRpcError *ret_error);
int mcp_resources_templates_list(McpServer *s, const JsonRpcMessage *m, cJSON **ret, JsonRpcError *ret_error);
int mcp_resources_read(McpServer *s, const JsonRpcMessage *m, cJSON **ret, JsonRpcError *ret_error);
int mcp_skills_list(McpServer *s, const JsonRpcMessage *m, cJSON **ret, JsonRpcError *ret_error);
int mcp_skills_get(McpServer *s, const JsonRpcMessage *m, cJSON **ret, JsonRpcError *ret_error);

/* A tool result: structuredContent (taken, even on failure) and one text. */
cJSON *mcp_tool_result(cJSON *structured, const char *text, bool is_error);
/* A tool result with isError and one text. */
cJSON *mcp_tool_error(const char *fmt, ...) _printf_(1, 2);
/* Fills a JsonRpcError; returns -EBADMSG. */
int mcp_error(JsonRpcError *e, int code, const char *fmt, ...) _printf_(3, 4);

/* What a child of the server does; the session kinds come last. */
typedef enum McpRunKind {
        MCP_RUN_SCRIPT,                 /* run_skill: skillctl run */
        MCP_RUN_COMMAND,                /* exec_skill: skillctl exec */
        MCP_RUN_SESSION_CREATE,
        MCP_RUN_SESSION_LIST,
        MCP_RUN_SESSION_REMOVE,
} McpRunKind;

/* Starts the child of a tool call for request id (k is NULL for the session kinds that name no
 * skill); the answer comes when it ends. Returns 1, or 0 with *ret a tool error (bad arguments),
 * or negative errno. */
int mcp_run_start(McpServer *s, const JsonRpcMessage *m, const cJSON *args, const McpSkill *k, McpRunKind kind,
                  cJSON **ret);
/* A child's command line up to its verb: skillctl's global options go along. */
int mcp_child_argv(char ***argv, const char *verb);
/* The session tools (sessions.c): the child's command line (0, or 1 with *ret a tool error), its
 * name for progress messages, and the answer from its stdout (NULL when it failed) and stderr. */
int mcp_session_prepare(McpServer *s, const cJSON *args, const McpSkill *k, McpRunKind kind, char ***argv,
                        cJSON **ret);
const char *mcp_session_verb(McpRunKind kind);
cJSON *mcp_session_answer(McpRunKind kind, char *text, const char *err);
/* notifications/cancelled: ends the run of that request, which is then not answered. */
void mcp_run_cancel(McpServer *s, const char *request_id);
/* Asks every run to stop (stdin closed or a signal). */
void mcp_runs_stop_all(McpServer *s);
void mcp_runs_free(McpServer *s);
const McpKept *mcp_kept_find(const McpServer *s, const char *run_id);

