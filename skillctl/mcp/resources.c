/* MCP resources: every file of a skill folder as skill://NAME/PATH (SEP-2640's scheme, so the
 * SKILL.md of each skill is skill://NAME/SKILL.md), and the artifacts of runs as
 * skilld-run://RUN-ID/PATH, which run_skill hands out as resource links. Text comes back as
 * text, anything else (not UTF-8, NUL bytes) as a base64 blob. Only what the catalog offers and
 * runs of this session left can be read: a URI is never a path on the host. */
#include "error.h"
#include "fileio.h"
#include "loader-internal.h"
#include "log.h"
#include "mcp.h"
#include "output.h"

#define MCP_RESOURCE_NOT_FOUND -32002

static int add_file_resource(cJSON *arr, const McpSkill *k, const Skill *skill, const McpFile *f) {
        _cleanup_free_ char *uri = mcp_skill_uri(k->name, f->path), *name = NULL;
        bool md = skill && streq(f->path, skill->md_filename);
        cJSON *o = cJSON_CreateObject();

        /* SEP-2640: the SKILL.md resource is named and described by the frontmatter. */
        name = md ? strdup(k->name) : strdup_printf("%s/%s", k->name, f->path);
        if (!uri || !name || !o || !cJSON_AddItemToArray(arr, o) || !cJSON_AddStringToObject(o, "uri", uri) ||
            !cJSON_AddStringToObject(o, "name", name) ||
            !cJSON_AddStringToObject(o, "mimeType", mcp_mime_type(f->path)) ||
            !cJSON_AddItemToObject(o, "size", json_u64(f->size)))
                return -ENOMEM;
        if (md && (!cJSON_AddStringToObject(o, "title", k->name) ||
                   !cJSON_AddStringToObject(o, "description", strempty(skill->description))))
                return -ENOMEM;
        return 0;
}

int mcp_resources_list(McpServer *s, const JsonRpcMessage *m, cJSON **ret, JsonRpcError *ret_error) {
        _cleanup_(mcp_catalog_done) McpCatalog c = {};
        _cleanup_(cJSON_Deletep) cJSON *o = cJSON_CreateObject();
        cJSON *arr;
        int r;

        if (!o || !(arr = cJSON_AddArrayToObject(o, "resources")))
                return -ENOMEM;
        r = mcp_catalog_load(s, &c);
        if (r < 0)
                return r;
        for (size_t i = 0; i < c.n; i++) {
                _cleanup_(skill_freep) Skill *skill = NULL;
                _cleanup_free_ char *error = NULL;
                McpFile *files = NULL;
                size_t n = 0;

                if (!c.skills[i].dir)
                        continue;
                if (mcp_skill_load(&c.skills[i], &skill, &error) < 0 ||
                    mcp_skill_files(&c.skills[i], false, &files, &n, &error) < 0) {
                        log_debug("Not listing the files of %s: %s", c.skills[i].name, strna(error));
                        continue;
                }
                for (size_t j = 0; r >= 0 && j < n; j++)
                        r = add_file_resource(arr, &c.skills[i], skill, &files[j]);
                mcp_files_free(files, n);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(o);
        return 0;
}

int mcp_resources_templates_list(McpServer *s, const JsonRpcMessage *m, cJSON **ret, JsonRpcError *ret_error) {
        _cleanup_(cJSON_Deletep) cJSON *o = cJSON_CreateObject();
        cJSON *arr, *t;

        if (!o || !(arr = cJSON_AddArrayToObject(o, "resourceTemplates")) || !(t = cJSON_CreateObject()) ||
            !cJSON_AddItemToArray(arr, t) || !cJSON_AddStringToObject(t, "uriTemplate", "skill://{name}/{+path}") ||
            !cJSON_AddStringToObject(t, "name", "skill-file") ||
            !cJSON_AddStringToObject(t, "title", "A file of a skill") ||
            !cJSON_AddStringToObject(t, "description", "A file of a skill list_skills shows; SKILL.md holds its "
                                     "instructions"))
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

static int read_artifact(McpServer *s, const char *run_id, const char *path, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF, ffd = -EBADF;
        _cleanup_free_ char *files = NULL;
        const McpKept *k = mcp_kept_find(s, run_id);

        if (!k || loader_check_path(path, NULL, NULL) < 0)
                return -ENOENT;
        files = strjoin_path(k->dir, "out/files");
        if (!files)
                return -ENOMEM;
        fd = open(files, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ffd = tree_open_file(fd, path, NULL);
        if (ffd < 0)
                return ffd == -ELOOP || ffd == -ENOTDIR || ffd == -EISDIR ? -ENOENT : ffd;
        return read_full_fd(ffd, MCP_RESOURCE_MAX, ret, ret_size);
}

int mcp_resources_read(McpServer *s, const JsonRpcMessage *m, cJSON **ret, JsonRpcError *ret_error) {
        const cJSON *uri = cJSON_GetObjectItemCaseSensitive(m->params, "uri");
        _cleanup_free_ char *authority = NULL, *path = NULL, *data = NULL, *blob = NULL;
        _cleanup_(mcp_catalog_done) McpCatalog c = {};
        _cleanup_(cJSON_Deletep) cJSON *o = NULL;
        size_t size = 0;
        cJSON *arr, *e;
        int r;

        if (!cJSON_IsString(uri))
                return mcp_error(ret_error, JSONRPC_INVALID_PARAMS, "Invalid params: resources/read needs \"uri\"");

        if (mcp_uri_split(uri->valuestring, "skill", &authority, &path) >= 0) {
                const McpSkill *k;

                r = mcp_catalog_load(s, &c);
                if (r < 0)
                        return r;
                k = mcp_catalog_find(&c, authority);
                r = k ? mcp_skill_read(k, path, &data, &size) : -ENOENT;
        } else if (mcp_uri_split(uri->valuestring, "skilld-run", &authority, &path) >= 0)
                r = read_artifact(s, authority, path, &data, &size);
        else
                r = -ENOENT;
        if (r == -EFBIG)
                return mcp_error(ret_error, JSONRPC_INVALID_PARAMS, "Resource too large to read: %s",
                                 uri->valuestring);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                /* -32002, the code the spec gives for an unknown resource. */
                return mcp_error(ret_error, MCP_RESOURCE_NOT_FOUND, "Resource not found: %s", uri->valuestring);
        }

        o = cJSON_CreateObject();
        if (!o || !(arr = cJSON_AddArrayToObject(o, "contents")) || !(e = cJSON_CreateObject()) ||
            !cJSON_AddItemToArray(arr, e) || !cJSON_AddStringToObject(e, "uri", uri->valuestring) ||
            !cJSON_AddStringToObject(e, "mimeType", mcp_mime_type(path)))
                return -ENOMEM;
        if (mcp_is_text(data, size)) {
                if (!cJSON_AddStringToObject(e, "text", data))
                        return -ENOMEM;
        } else if (!(blob = mcp_base64_encode(data, size)) || !cJSON_AddStringToObject(e, "blob", blob))
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}
