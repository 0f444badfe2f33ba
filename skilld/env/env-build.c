/* Building an environment. The host side decides and fetches (the Debian plan, apt-get download:
 * see env-debian.c), then one sandbox run with network, as a throwaway uid, unpacks and installs
 * everything into a staging tree bound writable at /env: dpkg-deb -x, pip install --target with
 * binary wheels only, npm ci with scripts off, then byte-compiles the Python files with unchecked
 * hashes so that nothing is ever written at run time. Back on the host the tree gets its digest
 * and manifest, is made read-only, fsync()ed and renamed into place in one step.
 *
 * One flock() per id makes concurrent builds of the same environment build it once; a build that
 * fails removes its staging tree, and one that is killed leaves a .build-* folder that the next
 * build of that id, or gc, removes (its lock shows it is dead). */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

#include "env-internal.h"
#include "error.h"
#include "fileio.h"
#include "hash.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

/* The script the sandbox runs, with /skill the build context (read-only) and /env the tree. It
 * reads only files the host wrote into the context; every decision was made before. */
static const char builder_script[] =
        "# skilld environment builder: runs in the sandbox, with network, as a throwaway uid.\n"
        "set -eu\n"
        "umask 022\n"
        "cd /skill\n"
        "# One run does everything; when pip comes before Debian, a first run (pip) does pip alone, the\n"
        "# host asks Debian for what pip did not find, and a second run (finish) does the rest.\n"
        "phase=${SKILLD_BUILD_PHASE:-all}\n"
        "mkdir -p /env/.build /env/skilld\n"
        "cp sitecustomize.py /env/skilld/sitecustomize.py\n"
        "for deb in debs/*.deb; do\n"
        "        [ \"$phase\" != pip ] && [ -e \"$deb\" ] || continue\n"
        "        echo \"skilld: unpacking ${deb#debs/}\"\n"
        "        dpkg-deb -x \"$deb\" /env/debian\n"
        "done\n"
        "# pip-sources.txt: --index-url or --no-index, and --find-links lines (wheelhouses at /mnt/N).\n"
        "pip() {\n"
        "        /usr/bin/python3 -m pip --isolated install --target /env/python --no-compile \\\n"
        "                --only-binary :all: --no-cache-dir --disable-pip-version-check --no-warn-script-location \\\n"
        "                --retries 1 --timeout 30 --upgrade -r pip-sources.txt \"$@\"\n"
        "}\n"
        "if [ \"$phase\" != finish ] && [ -s pip-requirements.txt ]; then\n"
        "        echo \"skilld: pip install from $(tr '\\n' ' ' <pip-sources.txt)\"\n"
        "        if ! pip -r pip-requirements.txt; then\n"
        "                if [ -e pip-hashes ]; then\n"
        "                        cut -f1 pip-each.txt >>/env/.build/pip-missing\n"
        "                else\n"
        "                        echo 'skilld: pip could not install everything together; one by one:'\n"
        "                        while IFS='\t' read -r name line; do\n"
        "                                pip \"$line\" || echo \"$name\" >>/env/.build/pip-missing\n"
        "                        done <pip-each.txt\n"
        "                fi\n"
        "        fi\n"
        "fi\n"
        "[ \"$phase\" != pip ] || exit 0\n"
        "if [ -e node/package.json ]; then\n"
        "        mkdir -p /env/node\n"
        "        cp node/package.json node/package-lock.json /env/node/\n"
        "        echo 'skilld: npm ci'\n"
        "        (cd /env/node && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --no-update-notifier \\\n"
        "                --cache /tmp/npm-cache ${SKILLD_NPM_REGISTRY:+--registry \"$SKILLD_NPM_REGISTRY\"}) \\\n"
        "                || echo npm >>/env/.build/npm-failed\n"
        "        rm -f /env/node/node_modules/.package-lock.json\n"
        "fi\n"
        "for d in /env/python /env/debian/usr/lib/python3/dist-packages /env/skilld; do\n"
        "        [ -d \"$d\" ] || continue\n"
        "        /usr/bin/python3 -m compileall -q -j0 --invalidation-mode unchecked-hash \"$d\" >/dev/null \\\n"
        "                || echo \"skilld: some files of $d did not byte-compile\"\n"
        "done\n";

/* Names a module no source provided when it is imported and nothing catches the error: the
 * skill's traceback, then skilld's own line, and the exit status of a missing environment. */
static const char sitecustomize_py[] =
        "# skilld: reports an import that the skill's environment does not provide.\n"
        "import sys\n"
        "\n"
        "def _skilld_excepthook(kind, value, tb, _previous=sys.excepthook):\n"
        "    _previous(kind, value, tb)\n"
        "    if not isinstance(value, ModuleNotFoundError) or not value.name:\n"
        "        return\n"
        "    top = value.name.partition('.')[0]\n"
        "    why = 'no declaration or import of this skill names it'\n"
        "    todo = \"declare it (requirements.txt) and run 'skillctl env build SKILL'\"\n"
        "    try:\n"
        "        import json\n"
        "        with open('/env/manifest.json') as f:\n"
        "            missing = json.load(f).get('missing', [])\n"
        "        for m in missing:\n"
        "            if m.get('module') == top or m.get('name') == top.lower().replace('_', '-'):\n"
        "                why = 'no source provided %s %s when the environment was built (%s)' % (\n"
        "                    m.get('ecosystem'), m.get('name'), m.get('reason'))\n"
        "                todo = (\"give the build a source that has it (a pip index or wheelhouse) and run \"\n"
        "                        \"'skillctl env build --rebuild SKILL'\")\n"
        "                break\n"
        "    except Exception:\n"
        "        pass\n"
        "    sys.stderr.write(\"skillctl: the Python module '%s' is not in this skill's environment: %s; %s\\n\"\n"
        "                     % (top, why, todo))\n"
        "    sys.stderr.flush()\n"
        "    import os\n"
        "    os._exit(122)\n"
        "\n"
        "sys.excepthook = _skilld_excepthook\n";

void env_build_result_done(EnvBuildResult *r) {
        strv_free(r->missing);
        cJSON_Delete(r->manifest);
        *r = (EnvBuildResult) {};
}

_printf_(2, 3)
static void build_log(int fd, const char *fmt, ...) {
        _cleanup_free_ char *s = NULL;
        va_list ap;

        if (fd < 0)
                return;
        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                s = NULL;
        va_end(ap);
        if (s)
                (void) loop_write(fd, s, strlen(s));
}

static int json_add(cJSON *o, const char *key, cJSON *v) {
        if (!v || !cJSON_AddItemToObject(o, key, v)) {
                cJSON_Delete(v);
                return -ENOMEM;
        }
        return 0;
}

static cJSON *strv_to_json(char * const *l) {
        cJSON *a = cJSON_CreateArray();

        STRV_FOREACH(s, l)
                if (!a || !cJSON_AddItemToArray(a, cJSON_CreateString(*s))) {
                        cJSON_Delete(a);
                        return NULL;
                }
        return a;
}

static int add_package(cJSON *a, const char *ecosystem, const char *name, const char *source,
                       const char *package, const char *version, const char *reason) {
        cJSON *o = cJSON_CreateObject();

        if (!o || !cJSON_AddItemToArray(a, o)) {
                cJSON_Delete(o);
                return -ENOMEM;
        }
        if (json_add(o, "ecosystem", cJSON_CreateString(ecosystem)) < 0 ||
            json_add(o, "name", cJSON_CreateString(name)) < 0 ||
            (source && json_add(o, "source", cJSON_CreateString(source)) < 0) ||
            (package && json_add(o, "package", cJSON_CreateString(package)) < 0) ||
            (version && json_add(o, "version", cJSON_CreateString(version)) < 0) ||
            (reason && json_add(o, "reason", cJSON_CreateString(reason)) < 0))
                return -ENOMEM;
        return 0;
}

/* pip's *.dist-info folder names: "name-version.dist-info". */
static int add_pip_resolved(int env_fd, cJSON *resolved) {
        _cleanup_close_ int fd = openat(env_fd, "python", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_strv_free_ char **names = NULL;
        DIR *d;
        struct dirent *de;

        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        d = fdopendir(fd);
        if (!d)
                return -errno;
        fd = -EBADF;
        while ((de = readdir(d))) {
                const char *e = endswith(de->d_name, ".dist-info");

                if (e && strv_extend(&names, de->d_name) < 0) {
                        closedir(d);
                        return -ENOMEM;
                }
        }
        closedir(d);
        strv_sort(names);
        STRV_FOREACH(n, names) {
                _cleanup_free_ char *name = strndup(*n, strlen(*n) - strlen(".dist-info"));
                char *dash;

                if (!name)
                        return -ENOMEM;
                dash = strrchr(name, '-');
                if (!dash)
                        continue;
                *dash = '\0';
                _cleanup_free_ char *norm = dep_python_normalize(name);
                if (!norm || add_package(resolved, "python", norm, "pip", NULL, dash + 1, NULL) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* The packages package-lock.json pins (lockfileVersion 2 and 3: "packages"). */
static int add_npm_resolved(const char *lock, cJSON *resolved) {
        _cleanup_(cJSON_Deletep) cJSON *j = cJSON_Parse(lock);
        cJSON *packages = cJSON_GetObjectItemCaseSensitive(j, "packages"), *p;

        cJSON_ArrayForEach(p, packages) {
                const char *name = p->string ? startswith(p->string, "node_modules/") : NULL;
                cJSON *v = cJSON_GetObjectItemCaseSensitive(p, "version");

                if (!name || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "dev")))
                        continue;
                if (add_package(resolved, "node", name, "npm", NULL, cJSON_IsString(v) ? v->valuestring : NULL,
                                NULL) < 0)
                        return -ENOMEM;
        }
        return 0;
}

typedef struct Build {
        const EnvSpec *spec;
        const EnvBuildOptions *o;
        int cache_fd;
        int build_fd;           /* .build-<id>-XXXXXX */
        char *build_name;
        uid_t uid;              /* the sandbox's, as root */
        EnvDebianPlan plan;
        char **pip_names;       /* Python distributions left for pip */
        bool debian_after_pip;  /* pip comes first: Debian gets what pip did not find (two runs) */
        char **missing;         /* "ecosystem:name" */
        cJSON *missing_json;
        cJSON *resolved_json;
} Build;

static void build_done(Build *b) {
        if (b->build_name && b->cache_fd >= 0)
                (void) env_tree_remove(b->cache_fd, b->build_name);
        free(b->build_name);
        safe_close(b->build_fd);
        env_debian_plan_done(&b->plan);
        strv_free(b->pip_names);
        strv_free(b->missing);
        cJSON_Delete(b->missing_json);
        cJSON_Delete(b->resolved_json);
}

static int build_missing(Build *b, const char *ecosystem, const char *name, const char *reason) {
        char *item = strdup_printf("%s:%s", ecosystem, name);

        if (!item || strv_push(&b->missing, item) < 0)
                return -ENOMEM;
        build_log(b->o->log_fd, "skilld: %s package %s: %s\n", ecosystem, name, reason);
        return add_package(b->missing_json, ecosystem, name, NULL, NULL, NULL, reason);
}

static bool resolver_enabled(const EnvSpec *s, EnvResolver r) {
        for (size_t i = 0; i < s->options.n_resolvers; i++)
                if (s->options.resolvers[i] == r)
                        return true;
        return false;
}

static bool resolver_before(const EnvSpec *s, EnvResolver a, EnvResolver b) {
        for (size_t i = 0; i < s->options.n_resolvers; i++) {
                if (s->options.resolvers[i] == a)
                        return true;
                if (s->options.resolvers[i] == b)
                        return false;
        }
        return false;
}

/* The host path of a find-links entry that names a local wheelhouse, or NULL for a URL. */
static const char *find_links_local_path(const char *l) {
        const char *p = startswith(l, "file://");

        if (p)
                return p[0] == '/' ? p : NULL;
        return l[0] == '/' ? l : NULL;
}

static int write_ctx(Build *b, const char *name, const char *text) {
        _cleanup_free_ char *path = strdup_printf("ctx/%s", name);

        if (!path)
                return -ENOMEM;
        return write_file_atomic_at(b->build_fd, path, text, strlen(text), 0644);
}

/* pip's sources, as lines of a requirements file the builder passes with -r: the index (or
 * --no-index: never pip's default), then each wheelhouse, a local one by where the sandbox binds
 * it (/mnt/N, in order). */
static int write_pip_sources(Build *b) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0, n_local = 0;
        FILE *f;

        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        if (b->spec->pip_index_url)
                fprintf(f, "--index-url %s\n", b->spec->pip_index_url);
        else
                (void) fputs("--no-index\n", f);
        STRV_FOREACH(l, b->spec->pip_find_links) {
                const char *path = find_links_local_path(*l);

                if (path)
                        fprintf(f, "--find-links /mnt/%zu\n", n_local++);
                else
                        fprintf(f, "--find-links %s\n", *l);
        }
        if (fclose(f) != 0)
                return -ENOMEM;
        return write_ctx(b, "pip-sources.txt", text);
}

/* Decides who provides what: Debian for the Python distributions (when it comes before pip) and
 * the system packages, pip for what Debian left, npm for package.json. */
static int build_plan(Build *b, char **error) {
        const EnvSpec *s = b->spec;
        _cleanup_free_ char *pip_req = NULL, *pip_each = NULL;
        size_t req_size = 0, each_size = 0;
        bool debian_first = resolver_enabled(s, ENV_RESOLVER_DEBIAN) &&
                            (!resolver_enabled(s, ENV_RESOLVER_PIP) ||
                             resolver_before(s, ENV_RESOLVER_DEBIAN, ENV_RESOLVER_PIP));
        bool pip_usable = resolver_enabled(s, ENV_RESOLVER_PIP) && (s->pip_index_url || s->pip_find_links);
        _cleanup_strv_free_ char **specs = NULL;
        char **py = NULL;
        FILE *req, *each;
        int r = 0;

        /* Hash-pinned requirements go to pip as written, or they would not be checked. */
        if (!(s->requirements && pip_usable) && debian_first) {
                py = s->python_names;
                /* The versions a requirement allows, which Debian's must satisfy. */
                STRV_FOREACH(l, s->python) {
                        _cleanup_(skill_dep_done) SkillDep d = {};

                        r = deps_parse_requirement(*l, &d, NULL);
                        if (r < 0)
                                return error_setf(error, r, "Cannot parse the requirement '%s'", *l);
                        r = strv_extend(&specs, strempty(d.spec));
                        if (r < 0)
                                return r;
                }
        }
        /* pip first, Debian next: Debian is asked after pip ran, for what pip did not find; never
         * for hash-pinned requirements, whose hashes Debian's packages could not honour. */
        b->debian_after_pip = !debian_first && resolver_enabled(s, ENV_RESOLVER_DEBIAN) && pip_usable &&
                              !s->requirements && s->python_names;
        if ((py || s->system) && resolver_enabled(s, ENV_RESOLVER_DEBIAN)) {
                build_log(b->o->log_fd, "skilld: asking apt which Debian packages provide them\n");
                r = env_debian_plan(py, specs, resolver_enabled(s, ENV_RESOLVER_DEBIAN) ? s->system : NULL,
                                    b->o->log_fd, &b->plan, error);
                if (r < 0)
                        return r;
        }

        req = open_memstream(&pip_req, &req_size);
        each = open_memstream(&pip_each, &each_size);
        if (!req || !each) {
                if (req)
                        (void) fclose(req);
                if (each)
                        (void) fclose(each);
                return -ENOMEM;
        }
        for (size_t i = 0; s->python_names && s->python_names[i]; i++) {
                const char *name = s->python_names[i];
                const EnvDebianItem *hit = NULL;

                for (size_t k = 0; k < b->plan.n_items; k++)
                        if (b->plan.items[k].ecosystem == DEP_ECOSYSTEM_PYTHON && streq(b->plan.items[k].name, name))
                                hit = &b->plan.items[k];
                if (hit && hit->source != ENV_SOURCE_NONE) {
                        r = add_package(b->resolved_json, "python", name,
                                        hit->source == ENV_SOURCE_HOST ? "host" : "debian", hit->package,
                                        hit->version, NULL);
                        if (r < 0)
                                break;
                        build_log(b->o->log_fd, "skilld: python %s: %s %s %s\n", name,
                                  hit->source == ENV_SOURCE_HOST ? "installed on the host as" : "Debian's",
                                  hit->package, hit->version);
                        continue;
                }
                if (hit && hit->reason && pip_usable)
                        build_log(b->o->log_fd, "skilld: python %s: %s; trying pip\n", name, hit->reason);
                if (pip_usable) {
                        fprintf(req, "%s\n", s->python[i]);
                        fprintf(each, "%s\t%s\n", name, s->python[i]);
                        r = strv_extend(&b->pip_names, name);
                } else if (hit && hit->reason)
                        r = build_missing(b, "python", name, hit->reason);
                else {
                        _cleanup_free_ char *why = strdup_printf(
                                "%s, and %s", py ? "not in the Debian archive" : "Debian was not asked (its resolver "
                                "is off, or comes after pip)", resolver_enabled(s, ENV_RESOLVER_PIP) ?
                                "pip has no source: no index or wheelhouse is configured" : "the pip resolver is off");

                        r = why ? build_missing(b, "python", name, why) : -ENOMEM;
                }
                if (r < 0)
                        break;
        }
        if (fclose(req) != 0 || fclose(each) != 0 || r < 0)
                return r < 0 ? r : -ENOMEM;
        for (size_t k = 0; k < b->plan.n_items; k++) {
                const EnvDebianItem *it = &b->plan.items[k];

                if (it->ecosystem != DEP_ECOSYSTEM_SYSTEM)
                        continue;
                r = it->source == ENV_SOURCE_NONE ?
                        build_missing(b, "system", it->name, "no such package in the host's apt sources") :
                        add_package(b->resolved_json, "system", it->name,
                                    it->source == ENV_SOURCE_HOST ? "host" : "debian", it->package, it->version, NULL);
                if (r < 0)
                        return r;
        }

        if (s->requirements && pip_usable) {
                r = write_ctx(b, "pip-requirements.txt", s->requirements);
                if (r >= 0)
                        r = write_ctx(b, "pip-hashes", "");
        } else
                r = write_ctx(b, "pip-requirements.txt", strempty(pip_req));
        if (r >= 0)
                r = write_ctx(b, "pip-each.txt", strempty(pip_each));
        if (r >= 0)
                r = write_pip_sources(b);
        if (r < 0)
                return r;

        if (s->package_json) {
                if (!resolver_enabled(s, ENV_RESOLVER_NPM)) {
                        STRV_FOREACH(n, s->node)
                                if ((r = build_missing(b, "node", *n, "the npm resolver is off")) < 0)
                                        return r;
                } else if (!s->package_lock) {
                        STRV_FOREACH(n, s->node)
                                if ((r = build_missing(b, "node", *n,
                                                       "package.json has no package-lock.json next to it; "
                                                       "run 'npm install --package-lock-only' and ship the lockfile")) < 0)
                                        return r;
                } else {
                        r = mkdir_p_at(b->build_fd, "ctx/node", 0755);
                        if (r >= 0)
                                r = write_ctx(b, "node/package.json", s->package_json);
                        if (r >= 0)
                                r = write_ctx(b, "node/package-lock.json", s->package_lock);
                        if (r < 0)
                                return r;
                }
        } else
                STRV_FOREACH(n, s->node)
                        if ((r = build_missing(b, "node", *n,
                                               "the skill has no package.json and package-lock.json to install it from")) < 0)
                                return r;
        return 0;
}

/* apt-get download of the plan's closure into ctx/debs. As root, apt hands the download to its
 * own _apt user, which must be able to write the folder: a fresh one under /tmp that only _apt
 * writes (the packages are public, and apt checks them against the signed indexes), copied from
 * there. Unprivileged, apt downloads as the caller, straight into the build folder. */
static int download_debs(Build *b, const char *build_dir, char **error) {
        _cleanup_free_ char *debs = strdup_printf("%s/ctx/debs", build_dir), *tmp = NULL;
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_close_ int tmp_fd = -EBADF, debs_fd = -EBADF;
        struct passwd pw, *apt = NULL;
        char pwbuf[4096];
        int r;

        if (!debs)
                return -ENOMEM;
        if (geteuid() != 0)
                return env_debian_download(b->plan.download, debs, b->o->log_fd, (uid_t) -1, error);

        r = mkdtemp_malloc("skilld-debs-XXXXXX", &tmp);
        if (r < 0)
                return error_setf(error, r, "Cannot create a download folder: %s", strerror(-r));
        if (getpwnam_r("_apt", &pw, pwbuf, sizeof(pwbuf), &apt) != 0)
                apt = NULL;
        if (apt && (chown(tmp, apt->pw_uid, 0) < 0 || chmod(tmp, 0755) < 0))
                r = error_setf(error, -errno, "Cannot hand %s to _apt: %m", tmp);
        if (r >= 0)
                r = env_debian_download(b->plan.download, tmp, b->o->log_fd, (uid_t) -1, error);
        if (r >= 0) {
                tmp_fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                debs_fd = open(debs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (tmp_fd < 0 || debs_fd < 0)
                        r = error_setf(error, -errno, "Cannot open the downloads: %m");
        }
        if (r >= 0)
                r = env_dir_names(tmp_fd, &names);
        STRV_FOREACH(n, names) {
                _cleanup_close_ int in = -EBADF, out = -EBADF;
                char buf[65536];
                ssize_t k;

                if (!endswith(*n, ".deb") || r < 0)
                        continue;
                in = openat(tmp_fd, *n, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                out = openat(debs_fd, *n, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
                if (in < 0 || out < 0) {
                        r = error_setf(error, -errno, "Cannot copy %s: %m", *n);
                        break;
                }
                while ((k = read(in, buf, sizeof(buf))) > 0)
                        if (loop_write(out, buf, (size_t) k) < 0) {
                                k = -1;
                                break;
                        }
                if (k < 0)
                        r = error_setf(error, -errno, "Cannot copy %s: %m", *n);
        }
        (void) rm_rf_at(AT_FDCWD, tmp);
        return r < 0 ? r : 0;
}

typedef struct FdArray {
        int fds[SANDBOX_RO_DIRS_MAX];
        size_t n;
} FdArray;

static void fd_array_done(FdArray *a) {
        for (size_t i = 0; i < a->n; i++)
                (void) safe_close(a->fds[i]);
        a->n = 0;
}

static int build_sandbox(Build *b, const char *phase, char **error) {
        _cleanup_(run_result_freep) RunResult *res = NULL;
        _cleanup_strv_free_ char **env = NULL;
        _cleanup_free_ char *ctx = NULL, *out = NULL, *err = NULL;
        _cleanup_close_ int env_fd = -EBADF, ctx_fd = -EBADF;
        RunRequest req = RUN_REQUEST_INIT;
        const char *cache_dir = b->o->cache_dir;
        _cleanup_(fd_array_done) FdArray ro = {};
        int r;

        ctx = strdup_printf("%s/%s/ctx", cache_dir, b->build_name);
        out = strdup_printf("%s/%s/out", cache_dir, b->build_name);
        if (!ctx || !out)
                return -ENOMEM;
        ctx_fd = openat(b->build_fd, "ctx", O_PATH | O_DIRECTORY | O_CLOEXEC);
        env_fd = openat(b->build_fd, "env", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (ctx_fd < 0 || env_fd < 0)
                return -errno;

        /* The local wheelhouses, read-only at /mnt/N (write_pip_sources() names them so). */
        STRV_FOREACH(l, b->spec->pip_find_links) {
                const char *path = find_links_local_path(*l);

                if (!path)
                        continue;
                if (ro.n >= ELEMENTSOF(ro.fds))
                        return error_setf(error, -E2BIG, "More than %u local wheelhouses", SANDBOX_RO_DIRS_MAX);
                ro.fds[ro.n] = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (ro.fds[ro.n] < 0)
                        return error_setf(error, -errno, "Cannot open the wheelhouse %s: %m", path);
                ro.n++;
        }
        {
                char *e = strdup_printf("SKILLD_BUILD_PHASE=%s", phase);
                if (!e || strv_push(&env, e) < 0)
                        return -ENOMEM;
        }
        if (b->spec->npm_registry) {
                char *e = strdup_printf("SKILLD_NPM_REGISTRY=%s", b->spec->npm_registry);
                if (!e || strv_push(&env, e) < 0)
                        return -ENOMEM;
        }

        req.skill_dir = ctx;
        req.skill_dir_fd = ctx_fd;
        req.skill_name = "environment-build";
        req.skill_hash = b->spec->id;
        req.script = "build.sh";
        req.interpreter = "/bin/sh";
        req.env_search = env;
        req.env_dir_fd = env_fd;
        req.env_writable = true;
        req.ro_dir_fds = ro.fds;
        req.n_ro_dir_fds = ro.n;
        /* The one sandbox besides --network runs that has the network: it fetches packages. */
        req.network = true;
        req.limits = (SandboxLimits) {
                .memory_max = 2ULL * 1024 * 1024 * 1024,
                .tasks_max = 1024,
                .cpu_percent = 200,
                .timeout_usec = b->o->timeout_usec ?: 30ULL * 60 * 1000 * 1000,
                .stdout_max = 1ULL * 1024 * 1024,
                .stderr_max = 1ULL * 1024 * 1024,
                .out_max = 1ULL * 1024 * 1024,
                .tmpfs_size = 1ULL * 1024 * 1024 * 1024,
                .artifacts_max = 16,
        };
        req.allow_missing = b->o->allow_missing;
        req.uid = b->uid;
        req.backend = b->o->backend;
        req.backend_userdata = b->o->backend_userdata;
        req.output_dir = out;
        req.stdout_fd = b->o->log_fd;
        req.stderr_fd = b->o->log_fd;

        r = sandbox_run(&req, &res, &err);
        if (r < 0)
                return error_setf(error, r, "The build sandbox could not run: %s", err ?: strerror(-r));
        if (res->status != RUN_STATUS_SUCCEEDED)
                return error_setf(error, -EIO, "The build failed in the sandbox (%s%s%s)",
                                  run_status_to_string(res->status), res->error ? ": " : "",
                                  strempty(res->error));
        return 0;
}

/* The specifiers of the requirement of the Python distribution name, "" for none. */
static int python_spec_of(const EnvSpec *s, const char *name, char **ret) {
        for (size_t i = 0; s->python_names && s->python_names[i]; i++) {
                _cleanup_(skill_dep_done) SkillDep d = {};
                int r;

                if (!streq(s->python_names[i], name))
                        continue;
                r = deps_parse_requirement(s->python[i], &d, NULL);
                if (r < 0)
                        return r;
                *ret = strdup(strempty(d.spec));
                return *ret ? 0 : -ENOMEM;
        }
        *ret = strdup("");
        return *ret ? 0 : -ENOMEM;
}

/* pip came first and ran: Debian gets what it did not find. Those Debian provides join the plan
 * (the second run unpacks them), the others are missing, each with both reasons. */
static int build_debian_after_pip(Build *b, char **error) {
        _cleanup_(env_debian_plan_done) EnvDebianPlan late = {};
        _cleanup_strv_free_ char **names = NULL, **specs = NULL;
        _cleanup_free_ char *text = NULL;
        char *save = NULL;
        int r;

        r = read_full_file_at(b->build_fd, "env/.build/pip-missing", 1024 * 1024, true, &text, NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return error_setf(error, r, "Cannot read what pip did not find: %s", strerror(-r));
        if (unlinkat(b->build_fd, "env/.build/pip-missing", 0) < 0)
                return error_setf(error, -errno, "Cannot remove env/.build/pip-missing: %m");
        for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                _cleanup_free_ char *spec = NULL;

                if (strv_contains(names, l))
                        continue;
                r = python_spec_of(b->spec, l, &spec);
                if (r >= 0)
                        r = strv_extend(&names, l);
                if (r >= 0)
                        r = strv_push(&specs, TAKE_PTR(spec));
                if (r < 0)
                        return r;
        }
        if (!names)
                return 0;

        build_log(b->o->log_fd, "skilld: asking apt which Debian packages provide what pip did not find\n");
        r = env_debian_plan(names, specs, NULL, b->o->log_fd, &late, error);
        if (r < 0)
                return r;
        for (size_t k = 0; k < late.n_items; k++) {
                EnvDebianItem *it = &late.items[k];

                if (it->source == ENV_SOURCE_NONE) {
                        _cleanup_free_ char *why = strdup_printf("pip found no binary wheel for it in its sources (see "
                                                                 "the log), and %s",
                                                                 it->reason ?: "it is not in the Debian archive");

                        r = why ? build_missing(b, "python", it->name, why) : -ENOMEM;
                } else {
                        build_log(b->o->log_fd, "skilld: python %s: %s %s %s\n", it->name,
                                  it->source == ENV_SOURCE_HOST ? "installed on the host as" : "Debian's", it->package,
                                  it->version);
                        r = add_package(b->resolved_json, "python", it->name,
                                        it->source == ENV_SOURCE_HOST ? "host" : "debian", it->package, it->version,
                                        NULL);
                }
                if (r < 0)
                        return r;
        }
        STRV_FOREACH(d, late.download)
                if (!strv_contains(b->plan.download, *d) && (r = strv_extend(&b->plan.download, *d)) < 0)
                        return r;
        return 0;
}

/* What the sandbox said it could not install. */
static int build_collect(Build *b, int env_fd) {
        _cleanup_free_ char *pip_missing = NULL, *npm_failed = NULL;
        char *save = NULL;
        int r;

        r = read_full_file_at(env_fd, ".build/pip-missing", 1024 * 1024, true, &pip_missing, NULL);
        if (r < 0 && r != -ENOENT)
                return r;
        for (char *l = pip_missing ? strtok_r(pip_missing, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
                _cleanup_free_ char *reason = NULL;
                const char *debian = NULL;

                for (size_t k = 0; k < b->plan.n_items; k++)
                        if (b->plan.items[k].ecosystem == DEP_ECOSYSTEM_PYTHON && streq(b->plan.items[k].name, l))
                                debian = b->plan.items[k].reason ?: "not in the Debian archive";
                reason = strdup_printf("no source provided it: %s%spip found no binary wheel for it in its sources "
                                       "(see the log)", strempty(debian), debian ? ", and " : "");
                if (!reason)
                        return -ENOMEM;
                r = build_missing(b, "python", l, reason);
                if (r < 0)
                        return r;
        }
        r = read_full_file_at(env_fd, ".build/npm-failed", 1024, true, &npm_failed, NULL);
        if (r < 0 && r != -ENOENT)
                return r;
        if (r >= 0)
                STRV_FOREACH(n, b->spec->node)
                        if ((r = build_missing(b, "node", *n, "npm ci failed (see the log)")) < 0)
                                return r;
        r = add_pip_resolved(env_fd, b->resolved_json);
        if (r >= 0 && b->spec->package_lock && !npm_failed)
                r = add_npm_resolved(b->spec->package_lock, b->resolved_json);
        if (r < 0)
                return r;
        return env_tree_remove(env_fd, ".build");
}

/* "python tabulate (Debian has python3-tabulate 0.8.9, the skill requires tabulate>=99); ..." */
static char *missing_summary(const cJSON *missing) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        const cJSON *m;
        FILE *f;

        f = open_memstream(&text, &size);
        if (!f)
                return NULL;
        cJSON_ArrayForEach(m, missing) {
                const cJSON *e = cJSON_GetObjectItemCaseSensitive(m, "ecosystem"),
                            *n = cJSON_GetObjectItemCaseSensitive(m, "name"),
                            *why = cJSON_GetObjectItemCaseSensitive(m, "reason");

                fprintf(f, "%s%s %s", ftell(f) > 0 ? "; " : "", cJSON_IsString(e) ? e->valuestring : "?",
                        cJSON_IsString(n) ? n->valuestring : "?");
                if (cJSON_IsString(why))
                        fprintf(f, " (%s)", why->valuestring);
        }
        if (fclose(f) != 0)
                return NULL;
        return TAKE_PTR(text);
}

static int build_manifest(Build *b, int env_fd, cJSON **ret) {
        _cleanup_(cJSON_Deletep) cJSON *m = cJSON_CreateObject();
        _cleanup_free_ char *canonical = NULL, *text = NULL;
        char digest[65];
        uint64_t size;
        struct timespec ts;
        int r;

        if (!m)
                return -ENOMEM;
        r = env_tree_digest(env_fd, "manifest.json", digest, &size);
        if (r < 0)
                return r;
        r = env_spec_canonical(b->spec, &canonical);
        if (r < 0)
                return r;
        (void) clock_gettime(CLOCK_REALTIME, &ts);
        if (json_add(m, "id", cJSON_CreateString(b->spec->id)) < 0 ||
            json_add(m, "builder_version", cJSON_CreateString(ENV_BUILDER_VERSION)) < 0 ||
            json_add(m, "spec", cJSON_CreateString(canonical)) < 0 ||
            json_add(m, "python", b->spec->python ? strv_to_json(b->spec->python) : cJSON_CreateArray()) < 0 ||
            json_add(m, "system", b->spec->system ? strv_to_json(b->spec->system) : cJSON_CreateArray()) < 0 ||
            json_add(m, "node", b->spec->node ? strv_to_json(b->spec->node) : cJSON_CreateArray()) < 0 ||
            json_add(m, "debian_downloads", b->plan.download ? strv_to_json(b->plan.download) : cJSON_CreateArray()) < 0 ||
            json_add(m, "resolved", TAKE_PTR(b->resolved_json)) < 0 ||
            json_add(m, "missing", TAKE_PTR(b->missing_json)) < 0 ||
            json_add(m, "digest", cJSON_CreateString(digest)) < 0 ||
            json_add(m, "size", cJSON_CreateNumber((double) size)) < 0 ||
            json_add(m, "created_usec", cJSON_CreateNumber((double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3)) < 0)
                return -ENOMEM;
        text = cJSON_Print(m);
        if (!text)
                return -ENOMEM;
        r = write_file_atomic_at(env_fd, "manifest.json", text, strlen(text), 0444);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

static int read_manifest(int cache_fd, const char *id, cJSON **ret) {
        _cleanup_free_ char *path = strdup_printf("%s/manifest.json", id), *text = NULL;
        int r;

        if (!path)
                return -ENOMEM;
        r = read_full_file_at(cache_fd, path, 64U * 1024U * 1024U, true, &text, NULL);
        if (r < 0)
                return r;
        *ret = cJSON_Parse(text);
        return *ret ? 0 : -EBADMSG;
}

/* A cached environment's result: its manifest says what it lacks. */
static int cached_result(int cache_fd, const char *id, EnvBuildResult *ret) {
        EnvBuildResult res = {};
        cJSON *m, *missing;
        int r;

        r = read_manifest(cache_fd, id, &res.manifest);
        if (r < 0)
                return r;
        missing = cJSON_GetObjectItemCaseSensitive(res.manifest, "missing");
        cJSON_ArrayForEach(m, missing) {
                cJSON *e = cJSON_GetObjectItemCaseSensitive(m, "ecosystem"), *n = cJSON_GetObjectItemCaseSensitive(m, "name");
                char *item;

                if (!cJSON_IsString(e) || !cJSON_IsString(n))
                        continue;
                item = strdup_printf("%s:%s", e->valuestring, n->valuestring);
                if (!item || strv_push(&res.missing, item) < 0) {
                        env_build_result_done(&res);
                        return -ENOMEM;
                }
        }
        memcpy(res.id, id, 65);
        res.cached = true;
        *ret = res;
        return 0;
}

int env_build(const EnvSpec *spec, const EnvBuildOptions *o, EnvBuildResult *ret, char **error) {
        _cleanup_(build_done) Build b = { .spec = spec, .o = o, .cache_fd = -EBADF, .build_fd = -EBADF };
        _cleanup_close_ int lock = -EBADF, env_fd = -EBADF, uid_lock = -EBADF;
        uid_t uid = o->uid;
        _cleanup_free_ char *lock_name = NULL, *env_path = NULL;
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_(cJSON_Deletep) cJSON *manifest = NULL;
        _cleanup_free_ char *templ = NULL;
        int r;

        r = mkdir_p_at(AT_FDCWD, o->cache_dir, 0755);
        if (r < 0)
                return error_setf(error, r, "Cannot create %s: %s", o->cache_dir, strerror(-r));
        b.cache_fd = open(o->cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (b.cache_fd < 0)
                return error_setf(error, -errno, "Cannot open %s: %m", o->cache_dir);

        lock_name = strdup_printf(".lock-%s", spec->id);
        if (!lock_name)
                return -ENOMEM;
        lock = openat(b.cache_fd, lock_name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (lock < 0)
                return error_setf(error, -errno, "Cannot open the lock of %s: %m", spec->id);
        if (flock(lock, LOCK_EX | LOCK_NB) < 0) {
                if (errno != EWOULDBLOCK)
                        return error_setf(error, -errno, "Cannot lock %s: %m", lock_name);
                build_log(o->log_fd, "skilld: another build of %.12s is running; waiting for it\n", spec->id);
                if (flock(lock, LOCK_EX) < 0)
                        return error_setf(error, -errno, "Cannot lock %s: %m", lock_name);
        }

        if (faccessat(b.cache_fd, spec->id, F_OK, AT_SYMLINK_NOFOLLOW) >= 0) {
                if (!o->rebuild) {
                        r = cached_result(b.cache_fd, spec->id, ret);
                        if (r >= 0) {
                                (void) env_needs_set(o->cache_dir, spec);
                                if (o->skill_hash)
                                        (void) env_binding_set(o->cache_dir, o->skill_hash, spec->id);
                                return 0;
                        }
                }
        }

        /* What builds of this id that were killed left behind. */
        r = env_dir_names(b.cache_fd, &names);
        if (r >= 0)
                STRV_FOREACH(n, names)
                        if (startswith(*n, ".build-") && startswith(*n + strlen(".build-"), spec->id))
                                (void) env_tree_remove(b.cache_fd, *n);

        /* Not a fixed buffer: a cache under a long $XDG_CACHE_HOME was cut short (EINVAL). */
        templ = strdup_printf("%s/.build-%s-XXXXXX", o->cache_dir, spec->id);
        if (!templ)
                return -ENOMEM;
        if (!mkdtemp(templ))
                return error_setf(error, -errno, "Cannot create a build folder in %s: %m", o->cache_dir);
        b.build_name = strdup(strrchr(templ, '/') + 1);
        if (!b.build_name)
                return -ENOMEM;
        b.build_fd = open(templ, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (b.build_fd < 0)
                return error_setf(error, -errno, "Cannot open %s: %m", templ);
        if (mkdirat(b.build_fd, "ctx", 0755) < 0 ||
            mkdirat(b.build_fd, "ctx/debs", 0755) < 0 || mkdirat(b.build_fd, "env", 0755) < 0)
                return error_setf(error, -errno, "Cannot populate %s: %m", templ);
        /* As root, the build's throwaway uid fills the tree and must own it (it is handed back to
         * root before it is sealed); the 0700 build folder keeps everyone else out. Unprivileged,
         * the caller's uid is the one the user namespace maps, and owns it already. */
        if (geteuid() == 0) {
                if (uid == (uid_t) -1) {
                        _cleanup_free_ char *why = NULL;

                        r = sandbox_uid_reserve(&uid, &uid_lock, &why);
                        if (r < 0)
                                return error_setf(error, r, "Cannot reserve a uid for the build: %s", why ?: strerror(-r));
                }
                if (fchmod(b.build_fd, 0700) < 0 || fchownat(b.build_fd, "env", uid, uid, 0) < 0)
                        return error_setf(error, -errno, "Cannot hand the build tree to uid %u: %m", uid);
        }

        b.missing_json = cJSON_CreateArray();
        b.resolved_json = cJSON_CreateArray();
        if (!b.missing_json || !b.resolved_json)
                return -ENOMEM;

        r = write_ctx(&b, "build.sh", builder_script);
        if (r >= 0)
                r = write_ctx(&b, "sitecustomize.py", sitecustomize_py);
        if (r < 0)
                return error_setf(error, r, "Cannot write the build context: %s", strerror(-r));
        r = build_plan(&b, error);
        if (r < 0)
                return r;

        b.uid = uid;
        if (b.debian_after_pip) {
                r = build_sandbox(&b, "pip", error);
                if (r >= 0)
                        r = build_debian_after_pip(&b, error);
                if (r < 0)
                        return r;
        }
        if (b.plan.download) {
                build_log(o->log_fd, "skilld: apt-get download of %zu Debian packages\n", strv_length(b.plan.download));
                r = download_debs(&b, templ, error);
                if (r < 0)
                        return r;
        }
        r = build_sandbox(&b, b.debian_after_pip ? "finish" : "all", error);
        if (r < 0)
                return r;

        env_fd = openat(b.build_fd, "env", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (env_fd < 0)
                return error_setf(error, -errno, "Cannot open the built tree: %m");
        if (geteuid() == 0) {
                _cleanup_free_ char *tree = strdup_printf("%s/env", templ);
                /* Back to root: nothing of the build's uid may own what runs use. */
                if (!tree)
                        return -ENOMEM;
                r = env_run_capture((char *[]) { (char *) "chown", (char *) "-R", (char *) "-h", (char *) "0:0",
                                                 tree, NULL }, NULL, o->log_fd, (uid_t) -1, NULL);
                if (r != 0)
                        return error_setf(error, -EIO, "Cannot give the built tree to root");
        }
        r = build_collect(&b, env_fd);
        if (r < 0)
                return error_setf(error, r, "Cannot read what the build left: %s", strerror(-r));

        if (strv_length(b.missing) > 0 && cJSON_GetArraySize(b.resolved_json) == 0 &&
            strv_length(b.plan.download) == 0) {
                _cleanup_free_ char *why = missing_summary(b.missing_json);

                return error_setf(error, -ENOMEDIUM, "No source provided any of the packages this skill needs: %s",
                                  strna(why));
        }

        r = build_manifest(&b, env_fd, &manifest);
        if (r < 0)
                return error_setf(error, r, "Cannot write the manifest: %s", strerror(-r));
        r = env_tree_seal(env_fd);
        if (r < 0)
                return error_setf(error, r, "Cannot make the tree read-only: %s", strerror(-r));

        env_path = strdup_printf("%s/env", b.build_name);
        if (!env_path)
                return -ENOMEM;
        if (o->rebuild && faccessat(b.cache_fd, spec->id, F_OK, AT_SYMLINK_NOFOLLOW) >= 0) {
                r = env_tree_remove(b.cache_fd, spec->id);
                if (r < 0)
                        return error_setf(error, r, "Cannot remove the old %s: %s", spec->id, strerror(-r));
        }
        if (renameat(b.cache_fd, env_path, b.cache_fd, spec->id) < 0)
                return error_setf(error, -errno, "Cannot move the environment into place: %m");
        if (fsync(b.cache_fd) < 0)
                return error_setf(error, -errno, "Cannot sync %s: %m", o->cache_dir);
        (void) env_needs_set(o->cache_dir, spec);
        if (o->skill_hash)
                (void) env_binding_set(o->cache_dir, o->skill_hash, spec->id);

        memcpy(ret->id, spec->id, 65);
        ret->cached = false;
        ret->missing = TAKE_PTR(b.missing);
        ret->manifest = TAKE_PTR(manifest);
        return 0;
}
