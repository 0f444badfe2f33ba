/* See inspect.h. */
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "entry.h"
#include "error.h"
#include "fileio.h"
#include "inspect.h"
#include "json-exact.h"
#include "lint.h"
#include "loader.h"
#include "skill.h"

#define INSPECTION_JSON_MAX (1024U * 1024U)

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

void inspection_done(Inspection *i) {
        free(i->name);
        free(i->description);
        free(i->hash);
        free(i->script);
        free(i->interpreter);
        free(i->error);
        *i = (Inspection) {};
}

/* Records why the skill is not acceptable; 0, since that is an answer, not a failure. */
static int refuse(Inspection *ret, int r, const char *message) {
        inspection_done(ret);
        ret->error_errno = r < 0 ? -r : r;
        ret->error = strdup(message ?: strerror(ret->error_errno));
        return ret->error ? 0 : -ENOMEM;
}

static int first_lint_error(const LintReport *report, char **ret) {
        for (size_t i = 0; i < report->n_diags; i++) {
                const LintDiag *d = &report->diags[i];

                if (d->severity != LINT_ERROR)
                        continue;
                if (d->line > 0)
                        *ret = strdup_printf("%s:%u: %s%s%s", d->file, d->line, strempty(d->key),
                                             d->key ? ": " : "", d->message);
                else
                        *ret = strdup_printf("%s: %s%s%s", d->file, strempty(d->key), d->key ? ": " : "",
                                             d->message);
                return *ret ? 0 : -ENOMEM;
        }
        *ret = strdup("The skill is not valid");
        return *ret ? 0 : -ENOMEM;
}

int inspect_tree(int dir_fd, const char *dir_name, const char *script, InspectFlags flags, Inspection *ret) {
        _cleanup_(skill_freep) Skill *s = NULL;
        _cleanup_(lint_report_freep) LintReport *report = NULL;
        _cleanup_(skill_entry_done) SkillEntry entry = {};
        _cleanup_free_ char *error = NULL, *shown = NULL;
        Inspection i = {};
        char hash[65];
        int r;

        r = skill_load_at(dir_fd, &s, &error);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return refuse(ret, -EBADMSG, error);

        /* The name goes into polkit details, the scope's description and the journal: it must be
         * a name, whatever else the author got wrong. */
        if (!s->name || !skill_name_is_valid(s->name)) {
                shown = cescape(strempty(s->name));
                error = shown ? strdup_printf("%s: name: '%s' is not a valid skill name (1-64 of a-z, 0-9 "
                                              "and single inner hyphens)", s->md_filename, shown) : NULL;
                return error ? refuse(ret, -EBADMSG, error) : -ENOMEM;
        }
        if (flags & INSPECT_LINT) {
                report = lint_report_new();
                if (!report)
                        return -ENOMEM;
                r = skill_lint(s, dir_name, report);
                if (r < 0)
                        return r;
                if (report->n_errors > 0) {
                        r = first_lint_error(report, &error);
                        if (r < 0)
                                return r;
                        return refuse(ret, -EBADMSG, error);
                }
        }
        r = skill_declared_limits(s, &i.limits, &error);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return refuse(ret, -EBADMSG, error);
        if (flags & INSPECT_ENTRY) {
                /* In the API's words: its callers have no --script. */
                r = skill_resolve_entry_named(s, dir_fd, script, "the script argument", &entry, &error);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return refuse(ret, r, error);
        }
        r = skill_tree_hash(dir_fd, hash, &error);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return refuse(ret, -EBADMSG, error);

        i.name = strdup(s->name);
        i.description = strdup(strempty(s->description));
        i.hash = strdup(hash);
        if (!i.name || !i.description || !i.hash)
                goto oom;
        if (flags & INSPECT_ENTRY) {
                const char *interp = interpreter_path(entry.interpreter);

                i.script = strdup(entry.script);
                if (!i.script || (interp && !(i.interpreter = strdup(interp))))
                        goto oom;
        }
        inspection_done(ret);
        *ret = i;
        return 0;

oom:
        inspection_done(&i);
        return -ENOMEM;
}

/* SECURITY: the caller keeps its own fd of the archive and may change the file while it is read
 * (a memfd without seals, a file it rewrites): the zip's directory, read first, and its entries,
 * read after, could then disagree. The loader reads a private copy, an unnamed file beside the
 * tree (disk, not the service's memory), unless the fd is a memfd sealed against any change.
 * ret is -EBADF when the caller's fd can be read as it is. */
static int archive_private_copy(int archive_fd, int dir_fd, int *ret, char **error) {
        const int immutable = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW;
        _cleanup_close_ int fd = -EBADF;
        uint64_t total = 0;
        char buf[65536];
        int seals, r;

        seals = fcntl(archive_fd, F_GET_SEALS);
        if (seals >= 0 && (seals & immutable) == immutable) {
                *ret = -EBADF;
                return 0;
        }
        fd = openat(dir_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR))
                fd = memfd_create("skilld-archive", MFD_CLOEXEC);
        if (fd < 0)
                return error_setf(error, -errno, "cannot make a private copy of the archive: %m");
        for (;;) {
                /* pread: the caller's file offset, which it shares with us, stays where it was. */
                ssize_t n = pread(archive_fd, buf, sizeof(buf), (off_t) total);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return error_setf(error, -errno, "cannot read the archive: %m");
                if (n == 0)
                        break;
                if (total + (uint64_t) n > INSPECT_ARCHIVE_MAX)
                        return error_setf(error, -EFBIG, "the archive grew beyond the 256M allowed while "
                                          "it was read");
                r = loop_write(fd, buf, (size_t) n);
                if (r < 0)
                        return error_setf(error, r, "cannot copy the archive: %s", strerror(-r));
                total += (uint64_t) n;
        }
        *ret = TAKE_FD(fd);
        return 0;
}

int inspect_archive(int archive_fd, int target_fd, const char *script, InspectFlags flags, Inspection *ret) {
        LoaderLimits limits = LOADER_LIMITS_DEFAULT;
        _cleanup_free_ char *error = NULL, *top = NULL;
        _cleanup_close_ int copy_fd = -EBADF;
        int r;

        r = archive_private_copy(archive_fd, target_fd, &copy_fd, &error);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return refuse(ret, r == -ENOSPC || r == -EDQUOT ? r : -EBADMSG, error);
        r = loader_extract_zip(copy_fd >= 0 ? copy_fd : archive_fd, target_fd, &limits, &top, &error);
        if (r == -ENOMEM)
                return r;
        /* A full disk under the work directory is not the archive's fault: keep its errno. */
        if (r < 0)
                return refuse(ret, r == -ENOSPC || r == -EDQUOT ? r : -EBADMSG, error);
        return inspect_tree(target_fd, top, script, flags, ret);
}

int inspect_directory(int dir_fd, const char *dir_name, const char *script, InspectFlags flags,
                      Inspection *ret) {
        _cleanup_free_ char *error = NULL;
        int r;

        r = loader_check_tree(dir_fd, NULL, &error);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return refuse(ret, -EBADMSG, error);
        return inspect_tree(dir_fd, dir_name, script, flags, ret);
}

static int add_string(cJSON *o, const char *key, const char *value) {
        cJSON *v = value ? cJSON_CreateString(value) : cJSON_CreateNull();

        if (!v || !cJSON_AddItemToObject(o, key, v)) {
                cJSON_Delete(v);
                return -ENOMEM;
        }
        return 0;
}

int inspection_to_json(const Inspection *i, char **ret) {
        _cleanup_(cJSON_Deletep) cJSON *o = cJSON_CreateObject();
        char *text;

        if (!o ||
            add_string(o, "name", i->name) < 0 || add_string(o, "description", i->description) < 0 ||
            add_string(o, "hash", i->hash) < 0 || add_string(o, "script", i->script) < 0 ||
            add_string(o, "interpreter", i->interpreter) < 0 || add_string(o, "error", i->error) < 0 ||
            !cJSON_AddNumberToObject(o, "errno", i->error_errno) ||
            !cJSON_AddNumberToObject(o, "limits_set", i->limits.set) ||
            !json_add_uint64(o, "timeout_usec", i->limits.timeout_usec) ||
            !json_add_uint64(o, "memory_max", i->limits.memory_max) ||
            !cJSON_AddNumberToObject(o, "cpu_percent", i->limits.cpu_percent))
                return -ENOMEM;
        text = cJSON_PrintUnformatted(o);
        if (!text)
                return -ENOMEM;
        *ret = text;
        return 0;
}

static int get_string(const cJSON *o, const char *key, char **ret) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

        if (!v || cJSON_IsNull(v)) {
                *ret = NULL;
                return 0;
        }
        if (!cJSON_IsString(v))
                return -EBADMSG;
        *ret = strdup(v->valuestring);
        return *ret ? 0 : -ENOMEM;
}

/* A number within 0..max, else 0. */
static double json_number_or(const cJSON *o, const char *key, double dflt, double max) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || v->valuedouble > max)
                return dflt;
        return v->valuedouble;
}

int inspection_from_json(const char *text, Inspection *ret) {
        _cleanup_(cJSON_Deletep) cJSON *o = cJSON_Parse(text);
        Inspection i = {};
        const cJSON *e;
        int r;

        if (!o || !cJSON_IsObject(o))
                return -EBADMSG;
        e = cJSON_GetObjectItemCaseSensitive(o, "errno");
        if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > 4095)
                return -EBADMSG;
        i.error_errno = (int) e->valuedouble;
        if ((r = get_string(o, "name", &i.name)) < 0 ||
            (r = get_string(o, "description", &i.description)) < 0 ||
            (r = get_string(o, "hash", &i.hash)) < 0 || (r = get_string(o, "script", &i.script)) < 0 ||
            (r = get_string(o, "interpreter", &i.interpreter)) < 0 ||
            (r = get_string(o, "error", &i.error)) < 0) {
                inspection_done(&i);
                return r;
        }
        /* Numbers our own child wrote; absent in an inspection that failed early. */
        i.limits = (SkillDeclaredLimits) {
                .set = (unsigned) json_number_or(o, "limits_set", 0, SANDBOX_LIMIT_CPU | SANDBOX_LIMIT_MEMORY |
                                                 SANDBOX_LIMIT_TIMEOUT),
                .timeout_usec = (uint64_t) json_number_or(o, "timeout_usec", 0, 7.0 * 24 * 3600 * 1000000),
                .memory_max = (uint64_t) json_number_or(o, "memory_max", 0, (double) (1ULL << 50)),
                .cpu_percent = (unsigned) json_number_or(o, "cpu_percent", 0, 100000),
        };
        /* Either an error, or everything a run needs. */
        if (i.error_errno == 0 && (!i.name || !i.hash)) {
                inspection_done(&i);
                return -EBADMSG;
        }
        inspection_done(ret);
        *ret = i;
        return 0;
}

int inspection_read(int result_fd, Inspection *ret) {
        _cleanup_free_ char *text = NULL;
        int r;

        if (lseek(result_fd, 0, SEEK_SET) < 0)
                return -errno;
        r = read_full_fd(result_fd, INSPECTION_JSON_MAX, &text, NULL);
        if (r < 0)
                return r;
        if (isempty(text))
                return -EIO;
        r = inspection_from_json(text, ret);
        if (r == -ENOMEM)
                return r;
        return r < 0 ? -EIO : 0;
}

_noreturn_ static void inspect_child(int archive_fd, int target_fd, const char *dir_name, const char *script,
                                     InspectFlags flags, int result_fd) {
        const int keep[] = { archive_fd, target_fd, result_fd };
        _cleanup_free_ char *text = NULL;
        Inspection i = {};
        sigset_t none;
        int r;

        /* The service's state is not ours: no bus, no event loop, only the three fds. */
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        if (close_all_fds_except(keep, ELEMENTSOF(keep)) < 0)
                _exit(EXIT_FAILURE);

        if (archive_fd >= 0)
                r = inspect_archive(archive_fd, target_fd, script, flags, &i);
        else
                r = inspect_directory(target_fd, dir_name, script, flags, &i);
        if (r < 0)
                _exit(EXIT_FAILURE);
        if (inspection_to_json(&i, &text) < 0 || loop_write(result_fd, text, strlen(text)) < 0)
                _exit(EXIT_FAILURE);
        _exit(EXIT_SUCCESS);
}

int inspect_spawn(int archive_fd, int target_fd, const char *dir_name, const char *script,
                  InspectFlags flags, pid_t *ret_pid, int *ret_result_fd) {
        _cleanup_close_ int result_fd = -EBADF;
        pid_t parent = getpid(), pid;

        result_fd = memfd_create("skilld-inspection", MFD_CLOEXEC);
        if (result_fd < 0)
                return -errno;

        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                /* Nothing may outlive the service, not even an inspection of a huge archive. */
                if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
                        _exit(EXIT_FAILURE);
                inspect_child(archive_fd, target_fd, dir_name, script, flags, result_fd);
        }
        *ret_pid = pid;
        *ret_result_fd = TAKE_FD(result_fd);
        return 0;
}
