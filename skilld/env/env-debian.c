/* The Debian resolver's host side: which Debian packages provide the Python distributions and
 * system packages a skill needs, and the download of what the host lacks.
 *
 * Why apt-get runs here and not in the sandbox: apt needs the host's package lists, its sources
 * and trusted keys under /etc/apt (with any auth.conf credentials) and its cache, none of which a
 * sandbox may see; and `apt-get download` runs no third-party code: it fetches .deb files and
 * checks them against the signed Release and Packages files. It runs as the caller of the build
 * (never with more rights than that caller has: skillctl runs unprivileged; the service runs it as
 * the same throwaway uid the build then uses). Unpacking the packages, which is where their
 * contents are first touched, happens in the sandbox (dpkg-deb -x in the builder script). */
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include "env-internal.h"
#include "error.h"
#include "fileio.h"

/* Runs argv with stdout captured (up to 16 MiB) and stderr copied to log_fd (or dropped), in
 * the C locale so its output parses the same everywhere. Returns the exit status, or < 0. */
int env_run_capture(char * const *argv, const char *cwd, int log_fd, uid_t uid, char **ret_out) {
        _cleanup_close_pair_ int p[2] = { -EBADF, -EBADF };
        _cleanup_free_ char *out = NULL;
        int status, r;
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);

                if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(p[1], STDOUT_FILENO) < 0 ||
                    dup2(log_fd >= 0 ? log_fd : null, STDERR_FILENO) < 0)
                        _exit(127);
                if (cwd && chdir(cwd) < 0)
                        _exit(127);
                if (uid != (uid_t) -1 && (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
                                          setresuid(uid, uid, uid) < 0))
                        _exit(127);
                (void) setenv("LC_ALL", "C", 1);
                (void) unsetenv("LANGUAGE");
                execvp(argv[0], argv);
                _exit(127);
        }
        p[1] = safe_close(p[1]);
        r = read_full_fd(p[0], 16U * 1024U * 1024U, &out, NULL);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (r < 0)
                return r;
        if (ret_out)
                *ret_out = TAKE_PTR(out);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void env_debian_plan_done(EnvDebianPlan *p) {
        for (size_t i = 0; i < p->n_items; i++) {
                free(p->items[i].name);
                free(p->items[i].package);
                free(p->items[i].version);
                free(p->items[i].reason);
        }
        free(p->items);
        strv_free(p->download);
        *p = (EnvDebianPlan) {};
}

typedef struct AptPolicy {
        char *name;
        char *installed;        /* NULL: not installed */
        char *candidate;        /* NULL: no candidate */
        char **versions;        /* the version table: every version the sources offer, best first */
} AptPolicy;

static void apt_policy_free_all(AptPolicy *a, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(a[i].name);
                free(a[i].installed);
                free(a[i].candidate);
                strv_free(a[i].versions);
        }
        free(a);
}

/* `apt-cache policy NAME...`: one block per known package, "NAME:" then "  Installed: V" and
 * "  Candidate: V", "(none)" for neither, then the "  Version table:" with one line per version
 * ("     V PRIORITY", " *** V PRIORITY" for the installed one) followed by its sources (deeper
 * lines: "        500 URI SUITE ..."). Unknown names have no block. */
static int apt_policy(char **names, int log_fd, AptPolicy **ret, size_t *ret_n) {
        _cleanup_strv_free_ char **argv = NULL;
        _cleanup_free_ char *out = NULL;
        AptPolicy *a = NULL;
        size_t n = 0;
        char *save = NULL;
        int r;

        if (strv_extend(&argv, "apt-cache") < 0 || strv_extend(&argv, "policy") < 0)
                return -ENOMEM;
        STRV_FOREACH(s, names)
                if (strv_extend(&argv, *s) < 0)
                        return -ENOMEM;
        r = env_run_capture(argv, NULL, log_fd, (uid_t) -1, &out);
        if (r < 0)
                return r;
        if (r != 0)
                return -EPROTO;

        for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                size_t indent = strspn(line, " ");
                char version[256], field[16];

                if (line[0] != ' ' && endswith(line, ":")) {
                        AptPolicy *na = reallocarray(a, n + 1, sizeof(*a));

                        if (!na) {
                                apt_policy_free_all(a, n);
                                return -ENOMEM;
                        }
                        a = na;
                        a[n] = (AptPolicy) { .name = strndup(line, strlen(line) - 1) };
                        if (!a[n++].name) {
                                apt_policy_free_all(a, n);
                                return -ENOMEM;
                        }
                        continue;
                }
                if (n == 0)
                        continue;
                /* A version line of the table: indented by 5, or " *** " for the installed one. */
                if ((indent == 5 || startswith(line, " *** ")) &&
                    sscanf(line + 5, "%255s", version) == 1) {
                        if (strv_extend(&a[n - 1].versions, version) < 0) {
                                apt_policy_free_all(a, n);
                                return -ENOMEM;
                        }
                        continue;
                }
                /* "  Installed: V", "  Candidate: V"; versions hold no spaces. */
                if (sscanf(line, " %15[A-Za-z]: %255s", field, version) != 2 || streq(version, "(none)"))
                        continue;
                if (streq(field, "Installed"))
                        a[n - 1].installed = strdup(version);
                else if (streq(field, "Candidate"))
                        a[n - 1].candidate = strdup(version);
        }
        *ret = a;
        *ret_n = n;
        return 0;
}

static const AptPolicy *apt_policy_find(const AptPolicy *a, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (streq(a[i].name, name))
                        return &a[i];
        return NULL;
}

/* Packages an environment never takes from the closure: the interpreter and the C library are
 * the host's, and a newer copy of either in LD_LIBRARY_PATH would not match the host's loader. */
static bool package_is_host_only(const char *name) {
        static const char *const prefixes[] = {
                "libc6", "libc-bin", "python3.", "libpython3", "python3-minimal", "libgcc-s", "libstdc++",
        };

        if (streq(name, "python3"))
                return true;
        for (size_t i = 0; i < ELEMENTSOF(prefixes); i++)
                if (startswith(name, prefixes[i]))
                        return true;
        return false;
}

/* `apt-get -s install --no-install-recommends PKG...`: the "Inst NAME [OLD] (VERSION ..." lines
 * are what the host lacks. Returns the exit status of apt-get. */
static int apt_closure(char **packages, int log_fd, char ***ret) {
        _cleanup_strv_free_ char **argv = NULL, **l = NULL;
        _cleanup_free_ char *out = NULL;
        char *save = NULL;
        int r;

        if (strv_extend(&argv, "apt-get") < 0 || strv_extend(&argv, "-s") < 0 ||
            strv_extend(&argv, "-q") < 0 || strv_extend(&argv, "install") < 0 ||
            strv_extend(&argv, "--no-install-recommends") < 0)
                return -ENOMEM;
        STRV_FOREACH(s, packages)
                if (strv_extend(&argv, *s) < 0)
                        return -ENOMEM;
        r = env_run_capture(argv, NULL, log_fd, (uid_t) -1, &out);
        if (r != 0)
                return r;
        for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char name[256], version[256];
                const char *p = startswith(line, "Inst ");

                if (!p || sscanf(p, "%255s", name) != 1)
                        continue;
                p = strchr(p, '(');
                if (!p || sscanf(p + 1, "%255s", version) != 1)
                        continue;
                if (package_is_host_only(name))
                        continue;
                char *item = strdup_printf("%s=%s", name, version);
                if (!item || strv_push(&l, item) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

static int plan_add(EnvDebianPlan *p, DepEcosystem e, const char *name, const char *package,
                    const char *version, EnvSource source, const char *reason) {
        EnvDebianItem *n = reallocarray(p->items, p->n_items + 1, sizeof(*n));

        if (!n)
                return -ENOMEM;
        p->items = n;
        n[p->n_items] = (EnvDebianItem) {
                .ecosystem = e,
                .name = strdup(name),
                .package = package ? strdup(package) : NULL,
                .version = version ? strdup(version) : NULL,
                .reason = reason ? strdup(reason) : NULL,
                .source = source,
        };
        p->n_items++;
        if (!n[p->n_items - 1].name || (package && !n[p->n_items - 1].package) ||
            (version && !n[p->n_items - 1].version) || (reason && !n[p->n_items - 1].reason))
                return -ENOMEM;
        return 0;
}

/* The upstream version of Debian version v, for messages: "3.4.1" for "3.4.1-1+deb12u1", or v. */
static char *upstream_for_message(const char *v) {
        char *u = NULL;

        return env_debian_upstream_version(v, &u) >= 0 ? u : strdup(v);
}

/* Which version of the package a holds, of those apt offers, satisfies the requirement spec of the
 * Python distribution name (PEP 440, on the upstream part of Debian's versions): the installed one
 * (*ret_installed), else the candidate, else the best other one of the version table. Returns 1
 * with *ret_version pointing into a; 0 when none does, with the reason in *ret_reason (if given):
 * "Debian has python3-pypdf 3.4.1, the skill requires pypdf>=4". */
static int pick_version(const AptPolicy *a, const char *name, const char *spec, const char **ret_version,
                        bool *ret_installed, char **ret_reason) {
        _cleanup_free_ char *shown = NULL;
        const char *tried[2] = { a->installed, a->candidate };
        bool unparsable = false;

        if (isempty(spec)) {
                *ret_installed = a->installed;
                *ret_version = a->installed ?: a->candidate;
                return 1;
        }
        for (size_t i = 0; i < ELEMENTSOF(tried) + strv_length(a->versions); i++) {
                const char *v = i < ELEMENTSOF(tried) ? tried[i] : a->versions[i - ELEMENTSOF(tried)];
                _cleanup_free_ char *upstream = NULL;
                int r;

                if (!v || (i >= ELEMENTSOF(tried) && (streq_ptr(v, a->installed) || streq_ptr(v, a->candidate))))
                        continue;
                r = env_debian_upstream_version(v, &upstream);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        unparsable = true;
                        continue;
                }
                r = env_pep440_satisfies(upstream, spec);
                if (r == -ENOMEM)
                        return r;
                if (r > 0) {
                        *ret_installed = i == 0;
                        *ret_version = v;
                        return 1;
                }
        }
        if (!ret_reason)
                return 0;
        shown = upstream_for_message(a->candidate ?: a->installed);
        if (!shown)
                return -ENOMEM;
        *ret_reason = unparsable && strv_length(a->versions) <= 1 ?
                strdup_printf("Debian has %s %s, which is not a version PEP 440 can compare with %s%s", a->name,
                              shown, name, spec) :
                strdup_printf("Debian has %s %s, the skill requires %s%s", a->name, shown, name, spec);
        return *ret_reason ? 0 : -ENOMEM;
}

int env_debian_plan(char **python_names, char **python_specs, char **system, int log_fd, EnvDebianPlan *ret,
                    char **error) {
        _cleanup_(env_debian_plan_done) EnvDebianPlan plan = {};
        _cleanup_strv_free_ char **query = NULL, **install = NULL;
        _cleanup_free_ char ***cands = NULL;
        AptPolicy *pol = NULL;
        size_t n_py = strv_length(python_names), n_pol = 0;
        int r;

        cands = calloc(n_py + 1, sizeof(char **));
        if (!cands)
                return -ENOMEM;
        for (size_t i = 0; i < n_py; i++) {
                r = env_debian_candidates(python_names[i], NULL, &cands[i]);
                if (r < 0)
                        goto finish;
                STRV_FOREACH(c, cands[i])
                        if (!strv_contains(query, *c) && (r = strv_extend(&query, *c)) < 0)
                                goto finish;
        }
        STRV_FOREACH(s, system)
                if (!strv_contains(query, *s) && (r = strv_extend(&query, *s)) < 0)
                        goto finish;
        if (!query) {
                r = 0;
                goto finish;
        }

        r = apt_policy(query, log_fd, &pol, &n_pol);
        if (r < 0) {
                r = error_setf(error, r, "apt-cache policy failed: %s",
                               r == -EPROTO ? "see the log above" : strerror(-r));
                goto finish;
        }

        for (size_t i = 0; i < n_py + strv_length(system); i++) {
                bool python = i < n_py;
                const char *name = python ? python_names[i] : system[i - n_py];
                const char *spec = python && python_specs ? python_specs[i] : NULL;
                DepEcosystem e = python ? DEP_ECOSYSTEM_PYTHON : DEP_ECOSYSTEM_SYSTEM;
                _cleanup_free_ char *reason = NULL;
                const AptPolicy *hit = NULL;
                const char *version = NULL;
                bool installed = false;

                if (python) {
                        STRV_FOREACH(c, cands[i]) {
                                const AptPolicy *a = apt_policy_find(pol, n_pol, *c);

                                if (!a || !(a->candidate || a->installed))
                                        continue;
                                r = pick_version(a, name, spec, &version, &installed, reason ? NULL : &reason);
                                if (r < 0)
                                        goto finish;
                                if (r > 0) {
                                        hit = a;
                                        break;
                                }
                        }
                } else {
                        const AptPolicy *a = apt_policy_find(pol, n_pol, name);

                        if (a && (a->candidate || a->installed)) {
                                hit = a;
                                installed = a->installed;
                                version = a->installed ?: a->candidate;
                        }
                }
                if (!hit)
                        r = plan_add(&plan, e, name, NULL, NULL, ENV_SOURCE_NONE, reason);
                else if (installed)
                        /* The host has it, and runs see the host's /usr: nothing to fetch. */
                        r = plan_add(&plan, e, name, hit->name, version, ENV_SOURCE_HOST, NULL);
                else {
                        /* Not the candidate: apt must be told which version. */
                        _cleanup_free_ char *item = streq_ptr(version, hit->candidate) ? strdup(hit->name) :
                                                    strdup_printf("%s=%s", hit->name, version);

                        r = item ? plan_add(&plan, e, name, hit->name, version, ENV_SOURCE_DEBIAN, NULL) : -ENOMEM;
                        if (r >= 0 && !strv_contains(install, item))
                                r = strv_push(&install, TAKE_PTR(item));
                }
                if (r < 0)
                        goto finish;
        }

        if (install) {
                r = apt_closure(install, log_fd, &plan.download);
                if (r > 0) {
                        /* Something in the set cannot be installed together: take each on its own,
                         * and name the ones that cannot be installed at all. */
                        STRV_FOREACH(pkg, install) {
                                _cleanup_strv_free_ char **one = NULL, **closure = NULL;

                                if (strv_extend(&one, *pkg) < 0) {
                                        r = -ENOMEM;
                                        goto finish;
                                }
                                r = apt_closure(one, log_fd, &closure);
                                if (r < 0)
                                        goto finish;
                                if (r > 0) {
                                        size_t l = strcspn(*pkg, "=");

                                        for (size_t i = 0; i < plan.n_items; i++)
                                                if (plan.items[i].package && strlen(plan.items[i].package) == l &&
                                                    strncmp(plan.items[i].package, *pkg, l) == 0 &&
                                                    plan.items[i].source == ENV_SOURCE_DEBIAN)
                                                        plan.items[i].source = ENV_SOURCE_NONE;
                                        continue;
                                }
                                STRV_FOREACH(c, closure)
                                        if (!strv_contains(plan.download, *c) &&
                                            (r = strv_extend(&plan.download, *c)) < 0)
                                                goto finish;
                        }
                        r = 0;
                }
                if (r < 0) {
                        r = error_setf(error, r, "apt-get -s install failed: %s", strerror(-r));
                        goto finish;
                }
        }
        r = 0;
        *ret = plan;
        plan = (EnvDebianPlan) {};

finish:
        for (size_t i = 0; i < n_py; i++)
                strv_free(cands[i]);
        apt_policy_free_all(pol, n_pol);
        return r;
}

int env_debian_download(char **packages, const char *dir, int log_fd, uid_t uid, char **error) {
        _cleanup_strv_free_ char **argv = NULL;
        int r;

        if (!packages)
                return 0;
        if (strv_extend(&argv, "apt-get") < 0 || strv_extend(&argv, "-q") < 0 ||
            strv_extend(&argv, "download") < 0)
                return -ENOMEM;
        STRV_FOREACH(p, packages)
                if (strv_extend(&argv, *p) < 0)
                        return -ENOMEM;
        r = env_run_capture(argv, dir, log_fd, uid, NULL);
        if (r < 0)
                return error_setf(error, r, "Failed to run apt-get download: %s", strerror(-r));
        if (r > 0)
                return error_setf(error, -EIO, "apt-get download failed with status %d (see the log above)", r);
        return 0;
}

int env_npm_registry(char **ret) {
        _cleanup_free_ char *out = NULL;
        int r;

        r = env_run_capture((char *[]) { (char *) "npm", (char *) "config", (char *) "get", (char *) "registry", NULL },
                            NULL, -EBADF, (uid_t) -1, &out);
        if (r != 0)
                return r < 0 ? r : -ENOENT;
        if (!out)
                return -ENOENT;
        out[strcspn(out, "\n")] = '\0';
        if (!startswith(out, "http://") && !startswith(out, "https://"))
                return -ENOENT;
        *ret = TAKE_PTR(out);
        return 0;
}
