/* Capturing the skill's stdout and stderr: the first max bytes are kept (and copied live to the
 * caller's terminal, escaped, or fd), the rest is counted and dropped, with one marker line saying so.
 * Draining continues after the cap, so a chatty skill never blocks on a full pipe and ends on
 * its own terms. */
#include "fileio.h"
#include "parse-util.h"
#include "sandbox-internal.h"

static int stream_keep(RunStream *s, const void *data, size_t n) {
        char *p;

        p = realloc(s->data, s->size + n + 1);
        if (!p)
                return -ENOMEM;
        memcpy(p + s->size, data, n);
        s->data = p;
        s->size += n;
        s->data[s->size] = '\0';
        return 0;
}

void live_copy_init(LiveCopy *l, int fd) {
        l->fd = fd;
        l->ok = true;
        term_escape_init(&l->esc, fd);
}

static void live_write(LiveCopy *l, const void *data, size_t n) {
        /* A reader that went away (skillctl ... | head) stops the copy, not the run. */
        if (l->fd >= 0 && l->ok && term_escape_write(&l->esc, l->fd, data, n) < 0)
                l->ok = false;
}

void live_copy_end(LiveCopy *l) {
        if (l->fd >= 0 && l->ok && term_escape_flush(&l->esc, l->fd) < 0)
                l->ok = false;
}

int run_stream_append(RunStream *s, const char *label, uint64_t max, const void *data, size_t n,
                      LiveCopy *live) {
        size_t room;
        int r;

        s->total += n;
        if (s->truncated)
                return 0;

        room = s->size < max ? (size_t) MIN((uint64_t) n, max - s->size) : 0;
        if (room > 0) {
                r = stream_keep(s, data, room);
                if (r < 0)
                        return r;
                live_write(live, data, room);
        }
        if (room < n) {
                char marker[128], sz[FORMAT_BYTES_MAX];

                (void) snprintf(marker, sizeof(marker), "\n[skilld: %s truncated after %s]\n", label,
                                format_bytes(sz, sizeof(sz), max));
                s->truncated = true;
                r = stream_keep(s, marker, strlen(marker));
                if (r < 0)
                        return r;
                live_copy_end(live);
                live_write(live, marker, strlen(marker));
        }
        return 0;
}
