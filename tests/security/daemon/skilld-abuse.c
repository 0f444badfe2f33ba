/* skilld-abuse: a hostile client of io.skilld.Skilld1 for the daemon's adversarial VM cases
 * (tests/vm/tests.d/7*-security-daemon-*.sh), sending what neither busctl nor skilld-call can:
 *
 *   skilld-abuse [--address ADDR] huge-input BYTES SKILL     Run with an input string of BYTES
 *   skilld-abuse [--address ADDR] deep-variant DEPTH SKILL   Run whose "limits" option is a
 *                                                            variant nested DEPTH levels deep
 *   skilld-abuse [--address ADDR] socket-skill               Run with a socket fd as the skill
 *   skilld-abuse [--address ADDR] flood COUNT BYTES          COUNT GetRun calls with a BYTES long
 *                                                            id, never reading a reply, then
 *                                                            sleeping until killed
 *   skilld-abuse [--address ADDR] listen [ID]                A match on every signal of the
 *                                                            Manager and every PropertiesChanged
 *                                                            of a run; each one heard is printed
 *                                                            ("signal MEMBER PATH"), and on
 *                                                            SIGTERM "heard COUNT". With ID, it
 *                                                            first reads that run's State (as a
 *                                                            client waiting for a run does).
 *                                                            "listening PID" once the match is in.
 *   skilld-abuse [--address ADDR] opath-skill PATH           Run with an O_PATH fd of PATH as the
 *                                                            skill
 *   skilld-abuse [--address ADDR] opath-input SKILL PATH     Run of SKILL with an O_PATH fd of
 *                                                            PATH as the input file "in"
 *   skilld-abuse [--address ADDR] memfd-swap after|during SKILL1 SKILL2
 *                                                            Run of SKILL1 from a memfd without
 *                                                            seals, rewritten with SKILL2 once Run
 *                                                            answered (after), or over and over
 *                                                            with SKILL2 and SKILL1 by a second
 *                                                            process while the call is in flight
 *                                                            (during)
 *   skilld-abuse [--address ADDR] run-flood COUNT SKILL      COUNT Run calls of SKILL sent at once,
 *                                                            then each answer read: "accepted ID"
 *                                                            or "ERROR.NAME" per line
 *   skilld-abuse uid-scan FIRST COUNT CGROUP                 Until SIGTERM, scans /proc every
 *                                                            20 ms for processes of uids FIRST to
 *                                                            FIRST+COUNT-1 and the run scope
 *                                                            (skilld-run-ID.scope) each is in,
 *                                                            printing "shared UID ID ID" when two
 *                                                            runs hold one uid at once; and reads
 *                                                            CGROUP/pids.current. Then a summary:
 *                                                            "scans N processes N runs N uids N
 *                                                            reuses N tasks-peak N".
 *
 * The calls print the error the daemon answered as "ERROR.NAME: message" on stdout (exit 0), or
 * "accepted ID" (exit 2): the tests decide what is right. --address: a direct connection (the
 * private socket); default the system bus. */
#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>

#include "fileio.h"
#include "parse-util.h"
#include "test-client.h"

/* Run(h skill, s script, as args, s input, a{sv} options), the caller filling input and options. */
static int new_run(const TestClient *c, int skill_fd, const char *input, sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = test_client_new_call(c, NULL, "Run", &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "hsass", skill_fd, "", 0, input);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

static int call_and_print(const TestClient *c, sd_bus_message *m) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *id;
        int r;

        r = sd_bus_call(c->bus, m, 300 * 1000000ULL, &error, &reply);
        if (r < 0) {
                test_client_print_error(stdout, &error, r);
                return EXIT_SUCCESS;
        }
        if (sd_bus_message_read(reply, "s", &id) < 0)
                id = "?";
        printf("accepted %s\n", id);
        return 2;
}

static int open_skill(const char *path) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return fd;
}

static int verb_huge_input(const TestClient *c, uint64_t bytes, const char *skill) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_close_ int fd = open_skill(skill);
        _cleanup_free_ char *input = NULL;
        int r;

        if (fd < 0)
                return EXIT_FAILURE;
        /* A JSON string: valid all along, only too long. */
        input = malloc(bytes + 1);
        if (!input)
                return EXIT_FAILURE;
        memset(input, 'a', bytes);
        input[0] = '"';
        input[bytes - 1] = '"';
        input[bytes] = '\0';
        r = new_run(c, fd, input, &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "a{sv}", 0);
        if (r < 0) {
                fprintf(stderr, "building the message: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        return call_and_print(c, m);
}

static int verb_deep_variant(const TestClient *c, unsigned depth, const char *skill) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_close_ int fd = open_skill(skill);
        unsigned opened = 0;
        int r;

        if (fd < 0)
                return EXIT_FAILURE;
        r = new_run(c, fd, "", &m);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'e', "sv");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", "limits");
        for (; r >= 0 && opened + 1 < depth; opened++)
                r = sd_bus_message_open_container(m, 'v', "v");
        if (r >= 0)
                r = sd_bus_message_append(m, "v", "t", UINT64_C(1));
        for (; r >= 0 && opened > 0; opened--)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r < 0) {
                /* sd-bus itself refused to build it: say so, the test decides. */
                printf("unbuildable: %s\n", strerror(-r));
                return EXIT_SUCCESS;
        }
        return call_and_print(c, m);
}

static int verb_socket_skill(const TestClient *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_close_pair_ int pair[2] = { -EBADF, -EBADF };
        int r;

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
                return EXIT_FAILURE;
        /* What a zip reader would look for first, should the daemon read it anyway. */
        (void) loop_write(pair[1], "PK\003\004", 4);
        r = new_run(c, pair[0], "", &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "a{sv}", 0);
        if (r < 0)
                return EXIT_FAILURE;
        return call_and_print(c, m);
}

static int verb_flood(const TestClient *c, uint64_t count, uint64_t bytes) {
        _cleanup_free_ char *id = NULL;
        uint64_t sent = 0;

        id = malloc(bytes + 1);
        if (!id)
                return EXIT_FAILURE;
        memset(id, 'f', bytes);
        id[bytes] = '\0';
        for (; sent < count; sent++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
                int r;

                r = test_client_new_call(c, NULL, "GetRun", &m);
                if (r >= 0)
                        r = sd_bus_message_append(m, "s", id);
                if (r >= 0)
                        r = sd_bus_send(c->bus, m, NULL);
                if (r < 0) {
                        printf("stopped after %" PRIu64 ": %s\n", sent, strerror(-r));
                        break;
                }
                /* Write what we can, never read: the replies pile up on the daemon's side. */
                (void) sd_bus_flush(c->bus);
        }
        if (sent == count)
                printf("sent %" PRIu64 "\n", sent);
        fflush(stdout);
        for (;;)
                pause();
}

static volatile sig_atomic_t arg_stop = 0;

static void on_term(int sig) {
        arg_stop = 1;
}

static int on_heard(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        unsigned *n = userdata;

        (*n)++;
        printf("signal %s %s\n", strna(sd_bus_message_get_member(m)), strna(sd_bus_message_get_path(m)));
        fflush(stdout);
        return 0;
}

static int verb_listen(const TestClient *c, const char *id) {
        struct sigaction sa = { .sa_handler = on_term };
        unsigned n = 0;
        int r;

        /* No sender in the matches: whatever reaches this connection is counted. */
        if (sigaction(SIGTERM, &sa, NULL) < 0)
                return EXIT_FAILURE;
        r = sd_bus_add_match(c->bus, NULL, "type='signal',interface='io.skilld.Skilld1.Manager'", on_heard, &n);
        if (r >= 0)
                r = sd_bus_add_match(c->bus, NULL,
                                     "type='signal',interface='org.freedesktop.DBus.Properties',"
                                     "member='PropertiesChanged',path_namespace='/io/skilld/Skilld1'",
                                     on_heard, &n);
        if (r < 0) {
                fprintf(stderr, "adding the matches: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        if (id) {
                _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
                _cleanup_free_ char *path = strdup_printf("/io/skilld/Skilld1/run/%s", id), *state = NULL;

                if (!path)
                        return EXIT_FAILURE;
                r = sd_bus_get_property_string(c->bus, c->destination, path, "io.skilld.Skilld1.Run", "State",
                                               &error, &state);
                if (r < 0)
                        printf("asked: %s\n", error.name ?: strerror(-r));
                else
                        printf("asked: %s\n", state);
        }
        printf("listening %d\n", (int) getpid());
        fflush(stdout);
        while (!arg_stop) {
                r = sd_bus_process(c->bus, NULL);
                if (r < 0) {
                        fprintf(stderr, "processing: %s\n", strerror(-r));
                        return EXIT_FAILURE;
                }
                if (r == 0)
                        (void) sd_bus_wait(c->bus, 100000);
        }
        /* The bus keeps the service's messages to us in order: what it sent before it answered a
         * Ping is in once the answer is. */
        r = sd_bus_call_method(c->bus, c->destination, "/io/skilld/Skilld1", "org.freedesktop.DBus.Peer", "Ping",
                               NULL, NULL, NULL);
        if (r < 0)
                fprintf(stderr, "Ping: %s\n", strerror(-r));
        while (sd_bus_process(c->bus, NULL) > 0)
                ;
        printf("heard %u\n", n);
        return EXIT_SUCCESS;
}

/* An O_PATH fd names a file without opening it: reading through it fails, and a service that
 * reopened it (through /proc/self/fd) would read what the caller may not. */
static int verb_opath(const TestClient *c, const char *skill, const char *path) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC), skill_fd = -EBADF;
        int r;

        if (fd < 0) {
                fprintf(stderr, "%s: %s\n", path, strerror(errno));
                return EXIT_FAILURE;
        }
        if (skill) {
                skill_fd = open_skill(skill);
                if (skill_fd < 0)
                        return EXIT_FAILURE;
        }
        r = new_run(c, skill ? skill_fd : fd, "", &m);
        if (r >= 0 && skill)
                r = sd_bus_message_append(m, "a{sv}", 1, "files", "a{sh}", 1, "in", fd);
        else if (r >= 0)
                r = sd_bus_message_append(m, "a{sv}", 0);
        if (r < 0) {
                fprintf(stderr, "building the message: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        return call_and_print(c, m);
}

/* The new content in one write, then the old tail cut: between two archives of one size the file
 * is never empty nor zero-filled, only ever one of them (or a mix of both while the write goes). */
static int memfd_set(int fd, const char *data, size_t size) {
        if (pwrite(fd, data, size, 0) != (ssize_t) size || ftruncate(fd, (off_t) size) < 0)
                return -errno;
        return 0;
}

static int verb_memfd_swap(const TestClient *c, bool during, const char *skill1, const char *skill2) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *v1 = NULL, *v2 = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t n1 = 0, n2 = 0;
        pid_t writer = 0;
        int r;

        if (read_full_file_at(AT_FDCWD, skill1, 1U << 24, false, &v1, &n1) < 0 ||
            read_full_file_at(AT_FDCWD, skill2, 1U << 24, false, &v2, &n2) < 0)
                return EXIT_FAILURE;
        /* No MFD_ALLOW_SEALING: no seal can ever be set on it. */
        fd = memfd_create("skilld-abuse", MFD_CLOEXEC);
        if (fd < 0 || memfd_set(fd, v1, n1) < 0)
                return EXIT_FAILURE;
        r = new_run(c, fd, "", &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "a{sv}", 0);
        if (r < 0)
                return EXIT_FAILURE;
        if (during) {
                writer = fork();
                if (writer < 0)
                        return EXIT_FAILURE;
                if (writer == 0)
                        for (;;) {
                                (void) memfd_set(fd, v2, n2);
                                (void) memfd_set(fd, v1, n1);
                        }
        }
        r = call_and_print(c, m);
        if (writer > 0) {
                (void) kill(writer, SIGKILL);
                (void) waitpid(writer, NULL, 0);
        }
        fflush(stdout);
        /* The run is the service's now: what the caller does to the memfd must not reach it. */
        if (memfd_set(fd, v2, n2) < 0)
                return EXIT_FAILURE;
        return r;
}

typedef struct Flood {
        uint64_t answered;
        char **answers;
} Flood;

static int on_run_answer(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Flood *f = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        const char *id = NULL;

        if (e)
                /* The name decides; the message tells a denial polkit gave from one it could not. */
                f->answers[f->answered] = strdup_printf("%s %s", e->name, strna(e->message));
        else {
                if (sd_bus_message_read(m, "s", &id) < 0)
                        id = "?";
                f->answers[f->answered] = strdup_printf("accepted %s", id);
        }
        f->answered++;
        return 0;
}

static int verb_run_flood(const TestClient *c, uint64_t count, const char *skill) {
        _cleanup_close_ int fd = open_skill(skill);
        Flood f = {};
        int r = 0;

        if (fd < 0 || count > 100000)
                return EXIT_FAILURE;
        f.answers = calloc(count, sizeof(char *));
        if (!f.answers)
                return EXIT_FAILURE;
        /* All sent before any answer is read: the service has them all at once. */
        for (uint64_t i = 0; i < count && r >= 0; i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;

                r = new_run(c, fd, "", &m);
                if (r >= 0)
                        r = sd_bus_message_append(m, "a{sv}", 0);
                if (r >= 0)
                        r = sd_bus_call_async(c->bus, NULL, m, on_run_answer, &f, 900 * 1000000ULL);
        }
        if (r < 0) {
                fprintf(stderr, "sending: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        while (f.answered < count) {
                r = sd_bus_process(c->bus, NULL);
                if (r < 0) {
                        fprintf(stderr, "processing: %s\n", strerror(-r));
                        return EXIT_FAILURE;
                }
                if (r == 0)
                        (void) sd_bus_wait(c->bus, UINT64_MAX);
        }
        for (uint64_t i = 0; i < count; i++) {
                printf("%s\n", strna(f.answers[i]));
                free(f.answers[i]);
        }
        free(f.answers);
        return EXIT_SUCCESS;
}

/* The run scope a process is in ("skilld-run-ID.scope" in its cgroup path), or "-". */
static void process_run(const char *pid, char ret[static 33]) {
        _cleanup_free_ char *path = strdup_printf("/proc/%s/cgroup", pid), *text = NULL;
        const char *p;

        strcpy(ret, "-");
        if (!path || read_full_file_at(AT_FDCWD, path, 65536, false, &text, NULL) < 0)
                return;
        p = strstr(text, "skilld-run-");
        if (p && strlen(p) >= 11 + 32) {
                memcpy(ret, p + 11, 32);
                ret[32] = '\0';
        }
}

static int process_uid(const char *pid, uid_t *ret) {
        _cleanup_free_ char *path = strdup_printf("/proc/%s/status", pid), *text = NULL;
        char field[16];
        const char *p;
        unsigned v;
        size_t n;

        if (!path || read_full_file_at(AT_FDCWD, path, 65536, false, &text, NULL) < 0)
                return -ENOENT;
        p = strstr(text, "\nUid:");
        if (!p)
                return -EINVAL;
        /* Real, effective, saved, fs: the effective one is what the process acts as. */
        p += 5;
        p += strspn(p, " \t");
        p += strcspn(p, " \t");
        p += strspn(p, " \t");
        n = strcspn(p, " \t\n");
        if (n == 0 || n >= sizeof(field))
                return -EINVAL;
        memcpy(field, p, n);
        field[n] = '\0';
        if (safe_atou(field, &v) < 0)
                return -EINVAL;
        *ret = (uid_t) v;
        return 0;
}

static DIR *closedir_safe(DIR *d) {
        if (d)
                (void) closedir(d);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir_safe);

typedef struct UidSeen {
        char run[33];                   /* the run seen with it last */
        uint64_t scan;                  /* when */
        bool ever;
} UidSeen;

static int verb_uid_scan(uid_t first, unsigned count, const char *cgroup) {
        struct sigaction sa = { .sa_handler = on_term };
        _cleanup_free_ UidSeen *seen = calloc(count, sizeof(UidSeen));
        _cleanup_free_ char *pids_path = strdup_printf("%s/pids.current", cgroup);
        uint64_t scans = 0, processes = 0, runs = 0, reuses = 0, tasks_peak = 0, shared = 0;
        unsigned uids = 0;

        if (!seen || !pids_path || sigaction(SIGTERM, &sa, NULL) < 0)
                return EXIT_FAILURE;
        printf("scanning %d\n", (int) getpid());
        fflush(stdout);
        while (!arg_stop) {
                _cleanup_(closedir_safep) DIR *d = opendir("/proc");
                _cleanup_free_ char *tasks = NULL;
                struct dirent *de;
                uint64_t t;

                if (!d)
                        return EXIT_FAILURE;
                scans++;
                while ((de = readdir(d))) {
                        char run[33];
                        uid_t uid;

                        if (de->d_name[0] < '1' || de->d_name[0] > '9' || process_uid(de->d_name, &uid) < 0)
                                continue;
                        if (uid < first || uid - first >= count)
                                continue;
                        process_run(de->d_name, run);
                        processes++;
                        if (streq(run, "-"))
                                continue;
                        UidSeen *u = &seen[uid - first];
                        if (u->scan == scans && !streq(u->run, run)) {
                                printf("shared %u %s %s\n", (unsigned) uid, u->run, run);
                                shared++;
                        }
                        if (!u->ever) {
                                uids++;
                                runs++;
                        } else if (!streq(u->run, run)) {
                                runs++;
                                /* Seen with another run before: that run must be gone by now,
                                 * which this scan proves for all processes it listed. */
                                reuses++;
                        }
                        u->ever = true;
                        u->scan = scans;
                        strcpy(u->run, run);
                }
                if (read_full_file_at(AT_FDCWD, pids_path, 64, false, &tasks, NULL) >= 0 &&
                    (tasks[strcspn(tasks, "\n")] = '\0', safe_atou64(tasks, &t) >= 0))
                        tasks_peak = MAX(tasks_peak, t);
                (void) usleep(20000);
        }
        printf("scans %" PRIu64 " processes %" PRIu64 " runs %" PRIu64 " uids %u reuses %" PRIu64
               " tasks-peak %" PRIu64 " shared %" PRIu64 "\n", scans, processes, runs, uids, reuses,
               tasks_peak, shared);
        return EXIT_SUCCESS;
}

int main(int argc, char *argv[]) {
        _cleanup_(test_client_done) TestClient client = {};
        const char *arg_address = NULL;
        uint64_t a = 0, b = 0;
        int r;

        if (argc > 2 && streq(argv[1], "--address")) {
                arg_address = argv[2];
                argc -= 2;
                argv += 2;
        }
        if (argc < 2) {
                fprintf(stderr, "usage: skilld-abuse [--address ADDR] "
                                "huge-input|deep-variant|socket-skill|flood|listen|opath-skill|"
                                "opath-input|memfd-swap|run-flood|uid-scan ...\n");
                return EXIT_FAILURE;
        }
        if (streq(argv[1], "uid-scan")) {
                unsigned first = 0, count = 0;

                if (argc != 5 || safe_atou(argv[2], &first) < 0 || safe_atou(argv[3], &count) < 0 ||
                    count == 0 || count > 1U << 20) {
                        fprintf(stderr, "usage: skilld-abuse uid-scan FIRST COUNT CGROUP\n");
                        return EXIT_FAILURE;
                }
                return verb_uid_scan(first, count, argv[4]);
        }
        r = test_client_connect(&client, arg_address);
        if (r < 0) {
                fprintf(stderr, "connecting: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        if (streq(argv[1], "huge-input") && argc == 4 && safe_atou64(argv[2], &a) >= 0 && a >= 2)
                return verb_huge_input(&client, a, argv[3]);
        if (streq(argv[1], "deep-variant") && argc == 4 && safe_atou64(argv[2], &a) >= 0 && a >= 1 &&
            a <= 1024)
                return verb_deep_variant(&client, (unsigned) a, argv[3]);
        if (streq(argv[1], "socket-skill") && argc == 2)
                return verb_socket_skill(&client);
        if (streq(argv[1], "flood") && argc == 4 && safe_atou64(argv[2], &a) >= 0 &&
            safe_atou64(argv[3], &b) >= 0 && b >= 1)
                return verb_flood(&client, a, b);
        if (streq(argv[1], "opath-skill") && argc == 3)
                return verb_opath(&client, NULL, argv[2]);
        if (streq(argv[1], "opath-input") && argc == 4)
                return verb_opath(&client, argv[2], argv[3]);
        if (streq(argv[1], "memfd-swap") && argc == 5 &&
            (streq(argv[2], "after") || streq(argv[2], "during")))
                return verb_memfd_swap(&client, streq(argv[2], "during"), argv[3], argv[4]);
        if (streq(argv[1], "run-flood") && argc == 4 && safe_atou64(argv[2], &a) >= 0 && a >= 1)
                return verb_run_flood(&client, a, argv[3]);
        if (streq(argv[1], "listen") && (argc == 2 || argc == 3))
                return verb_listen(&client, argc == 3 ? argv[2] : NULL);
        fprintf(stderr, "unknown command\n");
        return EXIT_FAILURE;
}
