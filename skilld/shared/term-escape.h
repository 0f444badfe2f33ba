/* A skill's output on the caller's terminal: copied live, with every byte a terminal would act on
 * instead of print shown as text. A terminal takes escape sequences from whatever it is sent,
 * and a skill's could set the clipboard (OSC 52), retitle the window (OSC 0), ask the terminal to
 * type an answer into the shell after skillctl exits (ESC [6n), switch the character set for
 * what follows (ESC ( 0) or hide and overwrite lines (ESC [8m, \r). So when the destination is a
 * terminal, C0 controls other than \n and \t, DEL, C1 controls (raw 0x80..0x9f and U+0080..U+009F,
 * 0x9b being CSI to 8-bit terminals), invalid UTF-8 and the layout controls are written as \xNN
 * or \uNNNN, like cescape() does; colours (SGR) included, since they can hide text as well as
 * paint it. Files, pipes and --json get the bytes as the skill wrote them.
 *
 * The copy is a stream: a UTF-8 sequence split between two writes is held back until its end
 * arrives (or term_escape_flush() shows the start as bytes). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef struct TermEscape {
        bool on;                        /* the destination is a terminal */
        unsigned char held[4];          /* the start of a UTF-8 sequence the last write cut */
        size_t n_held;
} TermEscape;

/* Escaping on when fd is a terminal. */
void term_escape_init(TermEscape *t, int fd);

/* Writes data to fd, escaped if t->on; returns loop_write()'s result. */
int term_escape_write(TermEscape *t, int fd, const void *data, size_t n);

/* At the end of the stream: a held incomplete sequence goes out as \xNN bytes. */
int term_escape_flush(TermEscape *t, int fd);
