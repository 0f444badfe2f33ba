/* "skillctl skill list|install|remove": the skills installed on the host, through the skilld
 * service. Installing passes the skill as a file descriptor like run does (a .skill file, or a
 * folder packed into a sealed memfd), after the same local validation; the service validates it
 * again and asks polkit (io.skilld.manage-skills).
 *
 * Exit status: 0; 1 when the service refused or failed, or the skill is invalid; 2 usage; 4 no
 * such skill. */
#include <getopt.h>

#include "bus-client.h"
#include "log.h"
#include "output.h"
#include "skill-fd.h"
#include "skill-path.h"
#include "verbs.h"

/* The skills of the user's skill folders (skill-path.h), after the service's, marked "user". A
 * name the service also has is listed twice: 'run NAME' takes the user's. */
static int add_user_skills(Table *t, cJSON *arr, bool quiet) {
        SkillPathEntry *e = NULL;
        size_t n = 0;
        int r;

        r = skill_path_list(&e, &n);
        if (r < 0)
                return log_error_errno(r, "Failed to list the user's skill folders: %m");
        for (size_t i = 0; i < n; i++) {
                cJSON *o;

                if (quiet) {
                        printf("%s\n", e[i].name);
                        continue;
                }
                o = cJSON_CreateObject();
                if (!o || !cJSON_AddItemToArray(arr, o) ||
                    !cJSON_AddStringToObject(o, "name", e[i].name) ||
                    !cJSON_AddStringToObject(o, "path", e[i].path) ||
                    !cJSON_AddStringToObject(o, "origin", "user") ||
                    table_add(t, e[i].name) < 0 || table_add(t, "user") < 0 || table_add(t, "-") < 0 ||
                    table_add(t, e[i].path) < 0) {
                        skill_path_entries_free(e, n);
                        return log_oom();
                }
        }
        skill_path_entries_free(e, n);
        return 0;
}

int verb_skill_list(int argc, char *argv[]) {
        static const struct option options[] = {
                { "help",  no_argument, NULL, 'h' },
                { "json",  no_argument, NULL, 'j' },
                { "quiet", no_argument, NULL, 'q' },
                {}
        };
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(client_freep) Client *c = NULL;
        _cleanup_(table_freep) Table *t = NULL;
        _cleanup_(cJSON_Deletep) cJSON *arr = NULL;
        _cleanup_free_ char *reason = NULL;
        const char *name, *description, *hash, *origin;
        bool json = false, quiet = false;
        int ch, r;

        while ((ch = getopt_long(argc, argv, "hq", options, NULL)) >= 0)
                switch (ch) {
                case 'h':
                        printf("Usage: skillctl skill list [--json|--quiet]\n\n"
                               "List the skills 'skillctl run NAME' runs by name: those of your skill folders\n"
                               "(./.claude/skills, ./.agents/skills, $XDG_DATA_HOME/skills, ~/.claude/skills,\n"
                               "~/.agents/skills, or $SKILLCTL_SKILLS_PATH) and those installed on the host\n"
                               "(vendor, admin and installed ones, through the skilld service).\n"
                               "--quiet prints only their names, one a line.\n");
                        return 0;
                case 'j':
                        json = true;
                        break;
                case 'q':
                        quiet = true;
                        break;
                default:
                        return EXIT_USAGE;
                }
        if (optind < argc)
                return usage_error("skill list", "takes no arguments");
        quiet = quiet && !json;

        t = table_new(4, "NAME", "ORIGIN", "HASH", "DESCRIPTION");
        arr = cJSON_CreateArray();
        if (!t || !arr)
                return log_oom(), EXIT_FAILURE;
        /* The service's skills when one answers, then the user's; without one, only the user's. */
        r = client_open(&c, &reason);
        if (r < 0 || (r == 0 && arg_host)) {
                log_error("%s", reason ?: strerror(-r));
                return EXIT_FAILURE;
        }
        if (r == 0) {
                log_debug("No skilld service, listing the user's skill folders only: %s", strna(reason));
                if (add_user_skills(t, arr, quiet) < 0)
                        return EXIT_FAILURE;
                return quiet ? 0 : listing_print(t, arr, json, "skill", "found");
        }
        r = client_call_method(c, SKILLD_BUS_PATH, SKILLD_BUS_MANAGER, "ListSkills", &e, &reply, NULL);
        if (r < 0)
                return client_exit_status(client_log_error("skill list", &e, r));

        r = sym_sd_bus_message_enter_container(reply, 'a', "(ssss)");
        while (r >= 0 &&
               (r = sym_sd_bus_message_read(reply, "(ssss)", &name, &description, &hash, &origin)) > 0) {
                cJSON *o;

                if (quiet) {
                        printf("%s\n", name);
                        continue;
                }
                o = cJSON_CreateObject();
                if (!o || !cJSON_AddItemToArray(arr, o) ||
                    !cJSON_AddStringToObject(o, "name", name) ||
                    !cJSON_AddStringToObject(o, "description", description) ||
                    !cJSON_AddStringToObject(o, "hash", hash) ||
                    !cJSON_AddStringToObject(o, "origin", origin) ||
                    table_add(t, name) < 0 || table_add(t, origin) < 0 ||
                    /* The first 12 digits tell skills apart; --json has them all. */
                    table_addf(t, "%.12s", hash) < 0 || table_add(t, description) < 0)
                        return log_oom(), EXIT_FAILURE;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to parse the skill list: %m"), EXIT_FAILURE;
        if (add_user_skills(t, arr, quiet) < 0)
                return EXIT_FAILURE;

        return quiet ? 0 : listing_print(t, arr, json, "skill", "found");
}

int verb_skill_install(int argc, char *argv[]) {
        static const struct option options[] = {
                { "help",    no_argument, NULL, 'h' },
                { "replace", no_argument, NULL, 'r' },
                {}
        };
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(local_skill_done) LocalSkill skill = LOCAL_SKILL_NULL;
        _cleanup_(client_freep) Client *c = NULL;
        _cleanup_free_ char *error = NULL;
        _cleanup_close_ int fd = -EBADF;
        const char *path, *name, *hash;
        bool replace = false;
        int ch, r;

        while ((ch = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (ch) {
                case 'h':
                        printf("Usage: skillctl skill install FILE|DIR [--replace]\n\n"
                               "Install a skill on the host (into /var/lib/skilld/skills) so that it runs\n"
                               "by name. --replace replaces an installed skill of the same name.\n");
                        return 0;
                case 'r':
                        replace = true;
                        break;
                default:
                        return EXIT_USAGE;
                }
        if (optind + 1 != argc)
                return usage_error("skill install", "expects exactly one FILE or DIR");
        path = argv[optind];

        r = local_skill_open(path, &skill, &error);
        if (r >= 0)
                r = local_skill_to_fd(&skill, &fd, &error);
        if (r < 0) {
                log_error("%s", error ?: strerror(-r));
                return EXIT_FAILURE;
        }

        r = client_open_or_fail(&c);
        if (r != 0)
                return r;
        if (!c->can_pass_fds) {
                log_error("%s: %s cannot pass file descriptors over SSH; install on the host", path,
                          c->where);
                return EXIT_FAILURE;
        }
        client_polkit_agent_open(c);
        r = client_call_method(c, SKILLD_BUS_PATH, SKILLD_BUS_MANAGER, "InstallSkill", &e, &reply, "hb", fd,
                               replace);
        if (r < 0)
                return client_exit_status(client_log_error(path, &e, r));
        r = sym_sd_bus_message_read(reply, "ss", &name, &hash);
        if (r < 0)
                return log_error_errno(r, "Failed to parse the reply of InstallSkill: %m"), EXIT_FAILURE;

        {
                _cleanup_free_ char *n = cescape(name);

                printf("Installed %s (sha256:%s).\n", strna(n), hash);
        }
        return 0;
}

int verb_skill_remove(int argc, char *argv[]) {
        _cleanup_(client_freep) Client *c = NULL;
        int r, ret = 0;

        if (argc >= 2 && (streq(argv[1], "--help") || streq(argv[1], "-h"))) {
                printf("Usage: skillctl skill remove NAME...\n\n"
                       "Remove skills installed with 'skill install' (vendor and admin skills are\n"
                       "files of the host, not removed here).\n");
                return 0;
        }
        if (argc < 2)
                return usage_error("skill remove", "expects a skill name");

        r = client_open_or_fail(&c);
        if (r != 0)
                return r;
        client_polkit_agent_open(c);
        for (int k = 1; k < argc; k++) {
                _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
                _cleanup_free_ char *what = NULL, *escaped = cescape(argv[k]);

                r = client_call_method(c, SKILLD_BUS_PATH, SKILLD_BUS_MANAGER, "RemoveSkill", &e, NULL, "s",
                                       argv[k]);
                if (r < 0) {
                        what = strdup_printf("skill %s", strna(escaped));
                        ret = ret ?: client_exit_status(client_log_error(what ?: "skill", &e, r));
                }
        }
        return ret;
}
