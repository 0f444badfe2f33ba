/* pip's own configuration of where packages come from, read the way `pip install` run by this user
 * reads it, for embedded builds: the index (index-url, no-index) and the wheelhouses (find-links).
 * The build itself runs pip with --isolated, which ignores all of it (the sandbox sees neither the
 * caller's files nor their environment), so skillctl takes these here and passes them explicitly.
 *
 * pip reads, in this order, each later one winning: the config files (for each of
 * $XDG_CONFIG_DIRS, default /etc/xdg: pip/pip.conf; /etc/pip.conf; ~/.pip/pip.conf;
 * $XDG_CONFIG_HOME/pip/pip.conf; the interpreter's prefix, /usr/pip.conf; then $PIP_CONFIG_FILE),
 * within a file the [global] section and then [install]; then the PIP_<NAME> environment
 * variables. PIP_CONFIG_FILE=/dev/null loads no file at all. Reading them here, rather than asking
 * `pip config list`, keeps a cache hit of `env build` from paying for an interpreter start. */
#include <ctype.h>
#include <stdio.h>

#include "env.h"
#include "fileio.h"

#define PIP_CONF_MAX (256U * 1024U)

void env_pip_config_done(EnvPipConfig *c) {
        free(c->index_url);
        strv_free(c->find_links);
        *c = (EnvPipConfig) {};
}

/* The three settings of one level (a section of the files, or the environment): NULL unset. */
typedef struct PipLevel {
        char *index_url;
        char *find_links;       /* whitespace-separated, as pip splits it */
        char *no_index;
} PipLevel;

static void pip_level_done(PipLevel *l) {
        free(l->index_url);
        free(l->find_links);
        free(l->no_index);
        *l = (PipLevel) {};
}

static int pip_level_set(PipLevel *l, const char *key, const char *value) {
        char **field = streq(key, "index-url") ? &l->index_url :
                       streq(key, "find-links") ? &l->find_links :
                       streq(key, "no-index") ? &l->no_index : NULL;

        if (!field)
                return 0;
        free(*field);
        *field = strdup(value);
        return *field ? 0 : -ENOMEM;
}

static char *strip(char *s) {
        size_t n;

        s += strspn(s, " \t");
        n = strlen(s);
        while (n > 0 && strchr(" \t\r", s[n - 1]))
                s[--n] = '\0';
        return s;
}

/* One INI file as Python's configparser reads it: "[section]", "key = value" or "key: value",
 * continuation lines indented, "#" and ";" comments. Keys are compared as pip does, with "_" as
 * "-". A missing or unreadable file is skipped, as pip skips it. */
static int pip_conf_read(const char *path, PipLevel *global, PipLevel *install) {
        _cleanup_free_ char *text = NULL, *key = NULL, *value = NULL;
        PipLevel *section = NULL;
        char *save = NULL;
        int r;

        r = read_full_file_at(AT_FDCWD, path, PIP_CONF_MAX, false, &text, NULL);
        if (r < 0)
                return r == -ENOMEM ? r : 0;

        for (char *line = strtok_r(text, "\n", &save);; line = strtok_r(NULL, "\n", &save)) {
                bool continued = line && (line[0] == ' ' || line[0] == '\t') && key && !isempty(strip(line));
                char *eq;

                if (continued) {
                        char *v = strdup_printf("%s\n%s", value, strip(line));

                        if (!v)
                                return -ENOMEM;
                        free(value);
                        value = v;
                        continue;
                }
                /* The previous key is complete. */
                if (key && section && (r = pip_level_set(section, key, strip(value))) < 0)
                        return r;
                free(key);
                free(value);
                key = value = NULL;
                if (!line)
                        break;
                line = strip(line);
                if (isempty(line) || line[0] == '#' || line[0] == ';')
                        continue;
                if (line[0] == '[') {
                        section = startswith(line, "[global]") ? global : startswith(line, "[install]") ? install : NULL;
                        continue;
                }
                eq = line + strcspn(line, "=:");
                if (!*eq)
                        continue;
                *eq = '\0';
                key = strdup(strip(line));
                value = strdup(strip(eq + 1));
                if (!key || !value)
                        return -ENOMEM;
                for (char *c = key; *c; c++)
                        *c = *c == '_' ? '-' : (char) tolower((unsigned char) *c);
        }
        return 0;
}

/* pip's strtobool. -EINVAL for anything else. */
static int pip_bool(const char *s) {
        static const char *const yes[] = { "y", "yes", "t", "true", "on", "1" },
                          *const no[] = { "n", "no", "f", "false", "off", "0" };

        for (size_t i = 0; s && i < ELEMENTSOF(yes); i++) {
                if (strcasecmp(s, yes[i]) == 0)
                        return 1;
                if (strcasecmp(s, no[i]) == 0)
                        return 0;
        }
        return s ? -EINVAL : 0;
}

int env_pip_config(EnvPipConfig *ret) {
        static const char *const env_vars[][2] = {
                { "PIP_INDEX_URL", "index-url" },
                { "PIP_FIND_LINKS", "find-links" },
                { "PIP_NO_INDEX", "no-index" },
        };
        _cleanup_(pip_level_done) PipLevel global = {}, install = {}, env = {};
        _cleanup_strv_free_ char **files = NULL;
        _cleanup_(env_pip_config_done) EnvPipConfig c = {};
        const char *config_file = getenv("PIP_CONFIG_FILE"), *home = getenv("HOME"),
                   *xdg_dirs = getenv("XDG_CONFIG_DIRS"), *xdg_home = getenv("XDG_CONFIG_HOME");
        const PipLevel *levels[] = { &global, &install, &env };
        const char *index_url = NULL, *find_links = NULL, *no_index = NULL;
        int r;

        if (!streq_ptr(config_file, "/dev/null")) {
                _cleanup_free_ char *dirs = strdup(!isempty(xdg_dirs) ? xdg_dirs : "/etc/xdg");
                char *save = NULL;

                if (!dirs)
                        return -ENOMEM;
                for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save))
                        if (d[0] == '/' && strv_push(&files, strdup_printf("%s/pip/pip.conf", d)) < 0)
                                return -ENOMEM;
                if (strv_extend(&files, "/etc/pip.conf") < 0)
                        return -ENOMEM;
                if (!isempty(home) && home[0] == '/') {
                        if (strv_push(&files, strdup_printf("%s/.pip/pip.conf", home)) < 0)
                                return -ENOMEM;
                        if (!(!isempty(xdg_home) && xdg_home[0] == '/') &&
                            strv_push(&files, strdup_printf("%s/.config/pip/pip.conf", home)) < 0)
                                return -ENOMEM;
                }
                if (!isempty(xdg_home) && xdg_home[0] == '/' &&
                    strv_push(&files, strdup_printf("%s/pip/pip.conf", xdg_home)) < 0)
                        return -ENOMEM;
                if (strv_extend(&files, "/usr/pip.conf") < 0)
                        return -ENOMEM;
                if (!isempty(config_file) && strv_extend(&files, config_file) < 0)
                        return -ENOMEM;
        }
        STRV_FOREACH(f, files) {
                r = pip_conf_read(*f, &global, &install);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < ELEMENTSOF(env_vars); i++) {
                const char *v = getenv(env_vars[i][0]);

                if (v && pip_level_set(&env, env_vars[i][1], v) < 0)
                        return -ENOMEM;
        }

        for (size_t i = 0; i < ELEMENTSOF(levels); i++) {
                if (levels[i]->index_url)
                        index_url = levels[i]->index_url;
                if (levels[i]->find_links)
                        find_links = levels[i]->find_links;
                if (levels[i]->no_index)
                        no_index = levels[i]->no_index;
        }
        r = pip_bool(no_index);
        c.no_index = r > 0;
        if (!isempty(index_url) && !c.no_index) {
                c.index_url = strdup(index_url);
                if (!c.index_url)
                        return -ENOMEM;
        }
        if (find_links) {
                _cleanup_free_ char *copy = strdup(find_links);
                char *save = NULL;

                if (!copy)
                        return -ENOMEM;
                for (char *w = strtok_r(copy, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save))
                        if (!strv_contains(c.find_links, w) && strv_extend(&c.find_links, w) < 0)
                                return -ENOMEM;
        }
        *ret = c;
        c = (EnvPipConfig) {};
        return 0;
}
