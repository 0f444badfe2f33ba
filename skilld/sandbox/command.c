/* The command form of a run ("skillctl exec SKILL -- CMD ARGS..."): an argv run as given, in the
 * skill's sandbox, instead of one of its scripts. No shell is involved unless the caller names
 * one. The program is looked up the way the sandbox's own PATH would find it, but from here, so
 * that "not found" is a precise error before anything is created: only /usr and the top-level
 * links into it exist inside, and those are the host's, bound read-only. A name holding a '/' is
 * left to execve() inside the sandbox, relative to the working directory (./tool.sh from /skill). */
#include <sys/stat.h>

#include "error.h"
#include "sandbox-internal.h"

/* The sandbox's PATH (request.c), in its order. */
static const char *const sandbox_path[] = {
        "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin",
};

int sandbox_command_check(char * const *command, const char *cwd, char **error) {
        size_t n = strv_length(command), bytes = 0;

        if (n == 0 || isempty(command[0]))
                return error_setf(error, -EINVAL, "The command is empty");
        if (n > 4096)
                return error_setf(error, -E2BIG, "The command has more than 4096 arguments");
        STRV_FOREACH(a, command)
                bytes += strlen(*a) + 1;
        if (bytes > 1024 * 1024)
                return error_setf(error, -E2BIG, "The command is longer than 1M");
        if (strlen(command[0]) > PATH_MAX / 2)
                return error_setf(error, -ENAMETOOLONG, "The command's program name is too long");
        if (cwd && !streq(cwd, "/work") && !streq(cwd, "/skill"))
                return error_setf(error, -EINVAL, "The working directory must be /work or /skill, not '%s'", cwd);
        return 0;
}

/* Whether the host file at path is what the sandbox would execute: a regular file with an x bit
 * for others (the sandbox user owns nothing of the host), through the links /usr has. */
static bool executable_for_sandbox(const char *path) {
        struct stat st;

        return stat(path, &st) >= 0 && S_ISREG(st.st_mode) && (st.st_mode & S_IXOTH);
}

int sandbox_command_resolve(const char *name, char **ret, char **error) {
        char *path;

        if (strchr(name, '/')) {
                /* Absolute paths outside /usr would not exist inside; others are the skill's or the
                 * run's files, which only execve() in there can judge. */
                path = strdup(name);
                if (!path)
                        return -ENOMEM;
                *ret = path;
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(sandbox_path); i++) {
                path = strdup_printf("%s/%s", sandbox_path[i], name);
                if (!path)
                        return -ENOMEM;
                if (executable_for_sandbox(path)) {
                        *ret = path;
                        return 0;
                }
                free(path);
        }
        return error_setf(error, -ENOENT, "Command %s is not found in the sandbox (it has /usr, and PATH %s)",
                          name, "/usr/local/bin:/usr/bin:/bin");
}
