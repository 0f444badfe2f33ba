/* SHA-256 (libmd for small inputs, Nettle loaded for large ones): streaming context plus hex
 * formatting. */
#pragma once

#include "util.h"

#define SHA256_DIGEST_SIZE 32
#define SHA256_HEX_SIZE (SHA256_DIGEST_SIZE * 2 + 1)

typedef struct Sha256 Sha256;

int sha256_new(Sha256 **ret);
/* The same for about size_hint bytes (UINT64_MAX: unknown), which picks the implementation. */
int sha256_new_sized(uint64_t size_hint, Sha256 **ret);
Sha256 *sha256_free(Sha256 *h);
DEFINE_TRIVIAL_CLEANUP_FUNC(Sha256 *, sha256_free);
int sha256_update(Sha256 *h, const void *data, size_t n);
/* Finishes and writes lowercase hex into hex (SHA256_HEX_SIZE bytes). */
int sha256_final_hex(Sha256 *h, char hex[static SHA256_HEX_SIZE]);

/* Hashes the rest of fd into hex, returning the number of bytes read in *ret_size. */
int sha256_fd(int fd, char hex[static SHA256_HEX_SIZE], uint64_t *ret_size);
/* The hash of one buffer. */
int sha256_buffer_hex(const void *data, size_t n, char hex[static SHA256_HEX_SIZE]);
/* Whether the fast implementation (Nettle) is loaded in this process (for the tests). */
bool sha256_fast_loaded(void);
