/* skilld: the skill runner service. Started on demand (D-Bus activation, or skilld.socket), it
 * serves io.skilld.Skilld1 until it has been idle for a while. See skilld(8); the Manager
 * (manager.h) is where the work is. */
#include <getopt.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "log.h"
#include "manager.h"
#include "policy.h"

static void help(void) {
        printf("Usage: skilld [OPTIONS]\n"
               "\n"
               "The skill runner service: runs Agent Skills in sandboxes for local users and services, on\n"
               "the D-Bus API io.skilld.Skilld1. Started by systemd; see skilld(8).\n"
               "\n"
               "Options:\n"
               "  -h --help               Show this help\n"
               "     --version            Show the version\n"
               "     --check-policy FILE  Validate an admin policy file and exit (0: valid)\n"
               "     --system             Serve on the system bus (the default)\n"
               "     --bus-address ADDR   Serve on this bus instead (tests)\n"
               "     --state-dir DIR      Keep the results store here (default /var/lib/skilld)\n"
               "     --runtime-dir DIR    Runtime files (default /run/skilld)\n"
               "     --policy FILE        Use this policy file over the built-in defaults (tests)\n"
               "     --no-idle-exit       Do not exit when idle\n"
               "  -v --verbose            Log debug messages\n");
}

static int check_policy(const char *path) {
        _cleanup_strv_free_ char **errors = NULL;
        int r;

        r = policy_check_file(path, &errors);
        STRV_FOREACH(e, errors)
                fprintf(stderr, "%s\n", *e);
        if (r < 0) {
                if (!errors)
                        fprintf(stderr, "%s: %s\n", path, strerror(-r));
                return EXIT_FAILURE;
        }
        printf("%s: valid\n", path);
        return EXIT_SUCCESS;
}

static int run(int argc, char *argv[]) {
        enum {
                ARG_VERSION = 0x100,
                ARG_CHECK_POLICY,
                ARG_SYSTEM,
                ARG_BUS_ADDRESS,
                ARG_STATE_DIR,
                ARG_RUNTIME_DIR,
                ARG_POLICY,
                ARG_NO_IDLE_EXIT,
        };
        static const struct option options[] = {
                { "help",         no_argument,       NULL, 'h'              },
                { "version",      no_argument,       NULL, ARG_VERSION      },
                { "verbose",      no_argument,       NULL, 'v'              },
                { "check-policy", required_argument, NULL, ARG_CHECK_POLICY },
                { "system",       no_argument,       NULL, ARG_SYSTEM       },
                { "bus-address",  required_argument, NULL, ARG_BUS_ADDRESS  },
                { "state-dir",    required_argument, NULL, ARG_STATE_DIR    },
                { "runtime-dir",  required_argument, NULL, ARG_RUNTIME_DIR  },
                { "policy",       required_argument, NULL, ARG_POLICY       },
                { "no-idle-exit", no_argument,       NULL, ARG_NO_IDLE_EXIT },
                {}
        };
        _cleanup_(manager_freep) Manager *m = NULL;
        ManagerOptions o = {};
        struct rlimit nofile;
        sigset_t mask;
        int c, r;

        while ((c = getopt_long(argc, argv, "hv", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("skilld %s\n", PROJECT_VERSION);
                        return 0;
                case 'v':
                        log_set_max_level(LOG_DEBUG);
                        break;
                case ARG_CHECK_POLICY:
                        return check_policy(optarg);
                case ARG_SYSTEM:
                        o.bus_address = NULL;
                        break;
                case ARG_BUS_ADDRESS:
                        o.bus_address = optarg;
                        break;
                case ARG_STATE_DIR:
                        o.state_dir = optarg;
                        break;
                case ARG_RUNTIME_DIR:
                        o.runtime_dir = optarg;
                        break;
                case ARG_POLICY:
                        o.policy_path = optarg;
                        break;
                case ARG_NO_IDLE_EXIT:
                        o.no_idle_exit = true;
                        break;
                default:
                        return EXIT_FAILURE;
                }
        if (optind < argc) {
                log_error("This program takes no arguments.");
                return EXIT_FAILURE;
        }

        /* sd-event handles these; they must not be delivered the classic way. SIGCHLD for the
         * workers and inspections, SIGPIPE because a caller's pipe may close under us. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGCHLD);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(errno, "Failed to block signals: %m"), EXIT_FAILURE;
        (void) signal(SIGPIPE, SIG_IGN);
        /* Queued runs hold their callers' fds and every peer of the private socket is one:
         * take what the hard limit allows (runs get their own, lower, limit from the engine). */
        if (getrlimit(RLIMIT_NOFILE, &nofile) >= 0 && nofile.rlim_cur < nofile.rlim_max) {
                nofile.rlim_cur = nofile.rlim_max;
                (void) setrlimit(RLIMIT_NOFILE, &nofile);
        }

        r = manager_new(&o, &m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up: %m"), EXIT_FAILURE;
        r = manager_startup(m);
        if (r < 0)
                return EXIT_FAILURE;
        r = manager_loop(m);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

int main(int argc, char *argv[]) {
        /* Under systemd stderr is a journal stream: keep the priorities. */
        if (getenv("JOURNAL_STREAM"))
                log_set_prefix_level(true);
        else
                log_set_program("skilld");
        /* Everything the service creates is root's alone unless it says otherwise. */
        (void) umask(0077);
        return run(argc, argv);
}
