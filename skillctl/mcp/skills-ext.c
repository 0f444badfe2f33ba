/* The SEP-2640 skills extension (capabilities.extensions["io.modelcontextprotocol/skills"]):
 * skills/list and skills/get. An entry is a skill's SKILL.md URI, its frontmatter as JSON (the
 * same content a client parsing the file gets) and every file as a resource with its sha256
 * digest and size, so a host can verify what resources/read gives it. Only skills whose files
 * are readable here are entries: an installed skill of the service is still runnable through
 * run_skill, but there is no SKILL.md to offer for it. */
#include "log.h"
#include "mcp.h"
#include "output.h"

static cJSON *skill_entry(const McpSkill *k, char **ret_uri) {
        _cleanup_(skill_freep) Skill *skill = NULL;
        _cleanup_(cJSON_Deletep) cJSON *o = NULL;
        _cleanup_free_ char *error = NULL, *uri = NULL;
        McpFile *files = NULL;
        size_t n = 0;
        cJSON *arr;
        int r;

        if (!k->dir)
                return NULL;
        r = mcp_skill_load(k, &skill, &error);
        if (r >= 0)
                r = mcp_skill_files(k, true, &files, &n, &error);
        if (r < 0) {
                log_debug("Not listing %s: %s", k->name, error ?: strerror(-r));
                return NULL;
        }
        uri = mcp_skill_uri(k->name, skill->md_filename);
        o = cJSON_CreateObject();
        if (!uri || !o || !cJSON_AddStringToObject(o, "uri", uri) ||
            !cJSON_AddItemToObject(o, "frontmatter", mcp_frontmatter_json(skill)) ||
            !(arr = cJSON_AddArrayToObject(o, "resources")))
                goto oom;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *furi = mcp_skill_uri(k->name, files[i].path);
                _cleanup_free_ char *digest = strdup_printf("sha256:%s", files[i].sha256);
                cJSON *e = cJSON_CreateObject();

                if (!furi || !digest || !e || !cJSON_AddItemToArray(arr, e) ||
                    !cJSON_AddStringToObject(e, "uri", furi) || !cJSON_AddStringToObject(e, "digest", digest) ||
                    !cJSON_AddItemToObject(e, "size", json_u64(files[i].size)))
                        goto oom;
        }
        mcp_files_free(files, n);
        if (ret_uri)
                *ret_uri = TAKE_PTR(uri);
        return TAKE_PTR(o);
oom:
        mcp_files_free(files, n);
        return NULL;
}

int mcp_skills_list(McpServer *s, const JsonRpcMessage *m, cJSON **ret, JsonRpcError *ret_error) {
        _cleanup_(mcp_catalog_done) McpCatalog c = {};
        _cleanup_(cJSON_Deletep) cJSON *o = cJSON_CreateObject();
        cJSON *arr;
        int r;

        r = mcp_catalog_load(s, &c);
        if (r < 0)
                return r;
        if (!o || !(arr = cJSON_AddArrayToObject(o, "skills")))
                return -ENOMEM;
        for (size_t i = 0; i < c.n; i++) {
                cJSON *e = skill_entry(&c.skills[i], NULL);

                if (e && !cJSON_AddItemToArray(arr, e)) {
                        cJSON_Delete(e);
                        return -ENOMEM;
                }
        }
        *ret = TAKE_PTR(o);
        return 0;
}

int mcp_skills_get(McpServer *s, const JsonRpcMessage *m, cJSON **ret, JsonRpcError *ret_error) {
        const cJSON *uri = cJSON_GetObjectItemCaseSensitive(m->params, "uri");
        _cleanup_free_ char *authority = NULL, *path = NULL, *entry_uri = NULL;
        _cleanup_(mcp_catalog_done) McpCatalog c = {};
        _cleanup_(cJSON_Deletep) cJSON *e = NULL, *o = NULL;
        const McpSkill *k;
        int r;

        if (!cJSON_IsString(uri))
                return mcp_error(ret_error, JSONRPC_INVALID_PARAMS, "Invalid params: skills/get needs \"uri\"");
        r = mcp_catalog_load(s, &c);
        if (r < 0)
                return r;
        k = mcp_uri_split(uri->valuestring, "skill", &authority, &path) >= 0 ? mcp_catalog_find(&c, authority) : NULL;
        e = k ? skill_entry(k, &entry_uri) : NULL;
        if (!e || !streq(entry_uri, uri->valuestring))
                return mcp_error(ret_error, JSONRPC_INVALID_PARAMS, "Invalid params: no skill is served at %s",
                                 uri->valuestring);
        o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToObject(o, "skill", TAKE_PTR(e)))
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}
