/* SHA-256 (Nettle): streaming context plus hex formatting. */
#pragma once

#include "util.h"

#define SHA256_DIGEST_SIZE 32
#define SHA256_HEX_SIZE (SHA256_DIGEST_SIZE * 2 + 1)

typedef struct Sha256 Sha256;

int sha256_new(Sha256 **ret);
Sha256 *sha256_free(Sha256 *h);
DEFINE_TRIVIAL_CLEANUP_FUNC(Sha256 *, sha256_free);
int sha256_update(Sha256 *h, const void *data, size_t n);
/* Finishes and writes lowercase hex into hex (SHA256_HEX_SIZE bytes). */
int sha256_final_hex(Sha256 *h, char hex[static SHA256_HEX_SIZE]);

/* Hashes the rest of fd into hex, returning the number of bytes read in *ret_size. */
int sha256_fd(int fd, char hex[static SHA256_HEX_SIZE], uint64_t *ret_size);
/* The hash of one buffer. */
int sha256_buffer_hex(const void *data, size_t n, char hex[static SHA256_HEX_SIZE]);
