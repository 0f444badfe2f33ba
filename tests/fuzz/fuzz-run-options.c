/* Fuzz target "run-options": the arguments of the service's Run() and RunInstalled() calls, above
 * all their a{sv} options dictionary, decoded by the very code the service runs
 * (skilld/daemon/run-options.c, which needs no bus).
 *
 * The input is a recipe, not a message: a first byte chooses the call and its fixed arguments,
 * then each entry is a key (one of the known ones, a wrong one, or bytes of the input), a D-Bus
 * type (the right one for the key or another) and the value bytes, strings length-prefixed and
 * fds chosen among a few kinds (a readable memfd, a write-only file, an O_PATH fd, a directory,
 * pipe ends). The target appends that to a method call on an unconnected bus, seals it and hands
 * it to run_options_parse().
 *
 * Promises checked: unknown keys, repeated keys and wrong variant types are refused with
 * InvalidArgs; every refusal is a D-Bus error (or -ENOMEM) with a message fit for a terminal; an
 * accepted call holds only environment entries the sandbox accepts, at most 256 of them, at most
 * RUN_FILES_MAX input files, each a regular file open for reading, output fds open for writing;
 * asked limits resolve against the default policy to values within the policy's maximums, or are
 * refused as above the maximum (E2BIG) or below the floor (EINVAL) with a message fit for a
 * terminal; no fd from the message stays open after it is freed. */
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "bus-errors.h"
#include "engine.h"
#include "fuzz.h"
#include "run-options.h"
#include "session.h"

typedef struct Recipe {
        FuzzReader in;
        bool bad;               /* an unknown or repeated key, or a wrong type: must be refused */
        unsigned seen;
} Recipe;

static Policy *policy;
static int fd_kinds[6];
static sd_bus *bus;
static int bus_fds[2];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        int scratch = fuzz_scratch_fd(), pipe_fds[2];
        _cleanup_close_ int wfd = -EBADF;

        fuzz_assert(policy_new_default(&policy) >= 0);
        /* sd-bus makes messages only on a started bus: one over a socketpair nobody answers,
         * left authenticating (which still lets messages carry fds). */
        fuzz_assert(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, bus_fds) >= 0);
        fuzz_assert(sd_bus_new(&bus) >= 0);
        fuzz_assert(sd_bus_set_fd(bus, bus_fds[0], bus_fds[0]) >= 0);
        fuzz_assert(sd_bus_start(bus) >= 0);

        /* Kept open for the whole run, so they count as the baseline for fd leaks. */
        fd_kinds[0] = fuzz_memfd("input", (const uint8_t *) "PK\003\004data", 8);
        wfd = openat(scratch, "write-only", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        fuzz_assert(wfd >= 0);
        fd_kinds[1] = TAKE_FD(wfd);
        fd_kinds[2] = openat(scratch, "write-only", O_PATH | O_CLOEXEC);
        fd_kinds[3] = openat(scratch, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        fuzz_assert(pipe2(pipe_fds, O_CLOEXEC) >= 0);
        fd_kinds[4] = pipe_fds[0];
        fd_kinds[5] = pipe_fds[1];
        for (size_t i = 0; i < ELEMENTSOF(fd_kinds); i++)
                fuzz_assert(fd_kinds[i] >= 0, "fd kind %zu: %m", i);
        return 0;
}

/* Names that lead somewhere: limit names, environment names, file names. */
static const char *const words[] = {
        "memory", "tasks", "cpu", "timeout", "stdout", "stderr", "output", "tmpfs",
        "LANG", "TERM", "PATH", "LD_PRELOAD", "HOME", "SKILL_DIR", "MY_VAR", "A=B",
        "data.json", "../x", ".", "a/b", "x\ny", "",
};

static char *word_or_string(Recipe *r) {
        return fuzz_word_or_string(&r->in, words, ELEMENTSOF(words));
}

static uint64_t number(Recipe *r) {
        static const uint64_t special[] = {
                0, 1, 100, 4096, 512ULL << 20, 4ULL << 30, UINT64_MAX, UINT64_MAX - 1,
                60000000, 3600000001ULL, 400, 401, 1ULL << 63,
        };

        return fuzz_number(&r->in, special, ELEMENTSOF(special));
}

static int fd_of(Recipe *r) {
        return fd_kinds[fuzz_byte(&r->in) % ELEMENTSOF(fd_kinds)];
}

static const char *const keys[] = {
        "limits", "env", "files", "network", "stdout", "stderr", "command", "cwd", "folders", "session",
        "Limits", "", "limits\033[31m", "network\n",
};
static const char *const key_types[] = { "a{st}", "a{ss}", "a{sh}", "b", "h", "h", "b", "s", "a{sh}", "s" };
static const char *const types[] = { "a{st}", "a{ss}", "a{sh}", "b", "h", "s", "u", "t", "as", "a{sv}" };

/* Appends a value of type types[t]. Returns the sd-bus error of the append (invalid UTF-8, ...). */
static int append_value(sd_bus_message *m, Recipe *r, size_t t) {
        unsigned n;
        int q;

        switch (t) {
        case 0: case 1: case 2: case 8: case 9:
                n = fuzz_byte(&r->in) % 8;
                q = sd_bus_message_open_container(m, 'a', types[t] + 1);
                for (unsigned i = 0; q >= 0 && i < n; i++) {
                        _cleanup_free_ char *k = word_or_string(r), *v = NULL;

                        if (t == 8) {
                                q = sd_bus_message_append(m, "s", k);
                                continue;
                        }
                        if (t == 0)
                                q = sd_bus_message_append(m, "{st}", k, number(r));
                        else if (t == 1) {
                                v = word_or_string(r);
                                q = sd_bus_message_append(m, "{ss}", k, v);
                        } else if (t == 2)
                                q = sd_bus_message_append(m, "{sh}", k, fd_of(r));
                        else
                                q = sd_bus_message_append(m, "{sv}", k, "t", number(r));
                }
                return q < 0 ? q : sd_bus_message_close_container(m);
        case 3:
                return sd_bus_message_append(m, "b", fuzz_byte(&r->in) & 1);
        case 4:
                return sd_bus_message_append(m, "h", fd_of(r));
        case 5: {
                _cleanup_free_ char *s = fuzz_string(&r->in);
                return sd_bus_message_append(m, "s", s);
        }
        case 6:
                return sd_bus_message_append(m, "u", (uint32_t) number(r));
        default:
                return sd_bus_message_append(m, "t", number(r));
        }
}

static int append_options(sd_bus_message *m, Recipe *r) {
        int q;

        q = sd_bus_message_open_container(m, 'a', "{sv}");
        while (q >= 0 && r->in.size > 0) {
                _cleanup_free_ char *own = NULL;
                uint8_t kb = fuzz_byte(&r->in), tb = fuzz_byte(&r->in);
                const char *key;
                size_t k = kb % 16, t;
                int ki;

                if (k < ELEMENTSOF(keys))
                        key = keys[k];
                else
                        key = own = fuzz_string(&r->in);
                /* Mostly the right type, so that the values get decoded too. */
                if (k < ELEMENTSOF(key_types) && tb < 0xc0)
                        /* types[] lists the first four in that order; h is 4, s is 5 */
                        t = k < 4 ? k : k < 6 ? 4 : k == 6 ? 3 : k == 8 ? 2 : 5;
                else
                        t = tb % ELEMENTSOF(types);

                ki = -1;
                for (size_t i = 0; i < ELEMENTSOF(key_types); i++)
                        if (streq(key, keys[i]))
                                ki = (int) i;
                if (ki < 0 || !streq(types[t], key_types[ki]) || (r->seen & (1U << ki)))
                        r->bad = true;
                if (ki >= 0)
                        r->seen |= 1U << ki;

                q = sd_bus_message_open_container(m, 'e', "sv");
                if (q >= 0)
                        q = sd_bus_message_append(m, "s", key);
                if (q >= 0)
                        q = sd_bus_message_open_container(m, 'v', types[t]);
                if (q >= 0)
                        q = append_value(m, r, t);
                if (q >= 0)
                        q = sd_bus_message_close_container(m);
                if (q >= 0)
                        q = sd_bus_message_close_container(m);
        }
        return q < 0 ? q : sd_bus_message_close_container(m);
}

static void check_refusal(int q, const sd_bus_error *error, const Recipe *recipe) {
        if (!sd_bus_error_is_set(error)) {
                fuzz_assert(q == -ENOMEM, "refused with %d and no D-Bus error", q);
                return;
        }
        fuzz_assert(streq(error->name, SD_BUS_ERROR_INVALID_ARGS) ||
                    streq(error->name, SKILLD_ERROR_INVALID_SKILL) ||
                    streq(error->name, SKILLD_ERROR_LIMIT_EXCEEDED), "error %s", error->name);
        fuzz_assert(fuzz_text_is_safe(error->message), "unsafe message: %s", strna(error->message));
}

static void check_accepted(const RunOptions *c) {
        _cleanup_free_ char *why = NULL;
        PolicyLimits limits;
        bool raised;
        int q;

        fuzz_assert(strv_length(c->env) <= 256 && c->n_files <= RUN_FILES_MAX);
        STRV_FOREACH(e, c->env) {
                _cleanup_free_ char *w = NULL;
                fuzz_assert(sandbox_env_check(*e, &w) >= 0, "accepted %s", *e);
        }
        for (size_t i = 0; i < c->n_files; i++) {
                int flags = fcntl(c->file_fds[i], F_GETFL);
                struct stat st;

                fuzz_assert(flags >= 0 && !(flags & O_PATH) && (flags & O_ACCMODE) != O_WRONLY);
                fuzz_assert(fstat(c->file_fds[i], &st) >= 0 && S_ISREG(st.st_mode));
                /* A folder's zip cannot change under the loader. */
                if (c->file_folders[i])
                        fuzz_assert((fcntl(c->file_fds[i], F_GET_SEALS) & F_SEAL_WRITE) != 0);
        }
        /* The command form names no script and has a program; cwd is one of the two. */
        if (c->command)
                fuzz_assert(!c->script && c->args && !isempty(c->args[0]));
        if (c->cwd)
                fuzz_assert(streq(c->cwd, "/work") || streq(c->cwd, "/skill"), "cwd %s", c->cwd);
        if (c->session)
                fuzz_assert(session_id_valid(c->session), "session %s", c->session);
        if (c->stdout_fd >= 0)
                fuzz_assert((fcntl(c->stdout_fd, F_GETFL) & O_ACCMODE) != O_RDONLY);
        if (c->stderr_fd >= 0)
                fuzz_assert((fcntl(c->stderr_fd, F_GETFL) & O_ACCMODE) != O_RDONLY);

        q = policy_resolve_limits(policy, &c->asked, &limits, &raised, &why);
        if (q < 0) {
                fuzz_assert(q == -E2BIG || q == -EINVAL, "code %d", q);
                fuzz_assert(fuzz_text_is_safe(why), "unsafe message: %s", strna(why));
                return;
        }
        for (PolicyLimit l = 0; l < _POLICY_LIMIT_MAX; l++) {
                fuzz_assert(limits.value[l] <= policy->maximums.value[l], "%s above max",
                            policy_limit_to_string(l));
                fuzz_assert(c->asked.value[l] == POLICY_LIMIT_UNSET || limits.value[l] == c->asked.value[l]);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *name = NULL, *script = NULL, *input = NULL;
        Recipe recipe = { .in = { .data = data, .size = size } };
        int fd_before = fuzz_lowest_free_fd();
        bool installed;
        uint8_t head;
        int q;

        head = fuzz_byte(&recipe.in);
        installed = !(head & 1);
        name = (head & 2) ? fuzz_string(&recipe.in) : strdup("fuzz-skill");
        script = (head & 4) ? fuzz_string(&recipe.in) : strdup("");
        input = (head & 8) ? fuzz_string(&recipe.in) : strdup((head & 16) ? "{\"a\": [1, 2]}" : "");
        fuzz_assert(name && script && input);

        fuzz_assert(sd_bus_message_new_method_call(bus, &m, "io.skilld.Skilld1", "/io/skilld/Skilld1",
                                                   "io.skilld.Skilld1.Manager",
                                                   installed ? "RunInstalled" : "Run") >= 0);
        if (installed)
                q = sd_bus_message_append(m, "ss", name, script);
        else
                q = sd_bus_message_append(m, "hs", fd_kinds[(head >> 5) % ELEMENTSOF(fd_kinds)], script);
        if (q >= 0)
                q = sd_bus_message_append(m, "as", 2, "--flag", "arg");
        if (q >= 0)
                q = sd_bus_message_append(m, "s", input);
        if (q >= 0)
                q = append_options(m, &recipe);
        /* sd-bus refuses to build some messages (invalid UTF-8, ...): nothing to decode then. */
        if (q >= 0 && sd_bus_message_seal(m, 1, 0) >= 0) {
                _cleanup_(run_options_done) RunOptions c = {};

                fuzz_assert(sd_bus_message_rewind(m, true) >= 0);
                q = run_options_parse(m, installed, &c, &error);
                if (q < 0)
                        check_refusal(q, &error, &recipe);
                else {
                        fuzz_assert(!recipe.bad, "a bad option was accepted");
                        check_accepted(&c);
                }
        }
        m = sd_bus_message_unref(m);
        fuzz_assert(fuzz_lowest_free_fd() == fd_before, "an fd leaked");
        return 0;
}
