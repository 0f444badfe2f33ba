/* Escaping a byte stream for a terminal: see term-escape.h for what and why. */
#include <unistd.h>

#include "fileio.h"
#include "term-escape.h"
#include "util.h"

void term_escape_init(TermEscape *t, int fd) {
        *t = (TermEscape) { .on = fd >= 0 && isatty(fd) > 0 };
}

/* Escapes the complete part of in[0..n) into out (room for 6 bytes per input byte); returns the
 * bytes written and sets *ret_used to the input consumed. An incomplete UTF-8 sequence at the
 * end is left unconsumed unless final. */
static size_t escape_chunk(const unsigned char *in, size_t n, bool final, char *out, size_t *ret_used) {
        char *o = out;
        size_t i = 0;

        while (i < n) {
                unsigned char c = in[i];
                size_t len = utf8_len(c);

                if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)) {
                        *o++ = (char) c;
                        i++;
                        continue;
                }
                if (len > 1 && i + len > n && !final) {
                        /* Cut by the write: wait for the rest if what came so far may be valid. */
                        bool prefix = true;

                        for (size_t k = i + 1; k < n; k++)
                                prefix = prefix && (in[k] & 0xc0) == 0x80;
                        if (prefix)
                                break;
                }
                if (len > 1 && i + len <= n && utf8_is_valid((const char *) in + i, len)) {
                        uint32_t cp = utf8_decode((const char *) in + i, len);

                        if (unichar_is_layout_control(cp) || (cp >= 0x80 && cp < 0xa0))
                                o += sprintf(o, "\\u%04x", (unsigned) cp);
                        else {
                                memcpy(o, in + i, len);
                                o += len;
                        }
                        i += len;
                        continue;
                }
                o += sprintf(o, "\\x%02x", c);
                i++;
        }
        *ret_used = i;
        return (size_t) (o - out);
}

static int escape_out(TermEscape *t, int fd, const unsigned char *data, size_t n, bool final) {
        _cleanup_free_ unsigned char *in = NULL;
        _cleanup_free_ char *out = NULL;
        size_t m = t->n_held + n, used, k;

        /* Each input byte becomes at most 6 output bytes (\x9b from 1, \u0085 from 2). */
        in = malloc(m + 1);
        out = malloc(m * 6 + 1);
        if (!in || !out)
                return -ENOMEM;
        memcpy(in, t->held, t->n_held);
        if (n > 0)
                memcpy(in + t->n_held, data, n);
        k = escape_chunk(in, m, final, out, &used);
        /* What is left is a cut sequence, 3 bytes at most. */
        t->n_held = m - used;
        memcpy(t->held, in + used, t->n_held);
        return k > 0 ? loop_write(fd, out, k) : 0;
}

int term_escape_write(TermEscape *t, int fd, const void *data, size_t n) {
        if (!t->on)
                return loop_write(fd, data, n);
        return escape_out(t, fd, data, n, false);
}

int term_escape_flush(TermEscape *t, int fd) {
        if (!t->on || t->n_held == 0)
                return 0;
        return escape_out(t, fd, (const unsigned char *) "", 0, true);
}
