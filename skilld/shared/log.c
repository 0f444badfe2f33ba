/* The log sink: stderr, with the program name on a terminal or a <N> priority prefix under
 * systemd. The daemon's journal entries for runs go through sd-journal elsewhere. */
#include "log.h"

static int max_level = LOG_INFO;
static const char *program = NULL;
static bool prefix_level = false;

void log_set_max_level(int level) {
        max_level = level;
}

int log_get_max_level(void) {
        return max_level;
}

void log_set_program(const char *name) {
        program = name;
}

void log_set_prefix_level(bool b) {
        prefix_level = b;
}

int log_internal(int level, int error, const char *file, int line, const char *func,
                 const char *fmt, ...) {
        char buf[4096];
        va_list ap;

        error = abs(error);
        if (level > max_level)
                return -error;

        /* %m must expand to the error passed in, not whatever errno happens to be. */
        errno = error;
        va_start(ap, fmt);
        (void) vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);

        if (prefix_level)
                fprintf(stderr, "<%d>%s\n", level, buf);
        else if (program)
                fprintf(stderr, "%s: %s\n", program, buf);
        else
                fprintf(stderr, "%s\n", buf);

        errno = error;
        return -error;
}
