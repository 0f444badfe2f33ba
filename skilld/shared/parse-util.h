/* Checked parsers for numbers, sizes and durations typed by users or read from files. Each one
 * refuses trailing garbage, signs where none belong and overflow, instead of atoi()'s guesses. */
#pragma once

#include "util.h"

int safe_atou64(const char *s, uint64_t *ret);
int safe_atou(const char *s, unsigned *ret);
int safe_atoi(const char *s, int *ret);

/* "512", "256K", "256M", "1G", "1.5G" (binary units; a trailing "B" or "iB" is accepted). */
int parse_size(const char *s, uint64_t *ret);
/* "30", "30s", "1.5", "500ms", "2min", "1h", "30d", "2w" into microseconds. */
int parse_sec(const char *s, uint64_t *ret_usec);
/* "50", "50%", "200%" into a percentage of one CPU. */
int parse_percent_unbounded(const char *s, unsigned *ret);

/* Formats bytes as "256.0M" into buf (at least FORMAT_BYTES_MAX). */
#define FORMAT_BYTES_MAX 16
char *format_bytes(char *buf, size_t l, uint64_t bytes);
