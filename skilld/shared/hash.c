/* See hash.h. libgcrypt rather than OpenSSL's libcrypto: libsystemd, which skilld links (and
 * skillctl loads to talk to it), brings libgcrypt into the process anyway (on Debian 12), and
 * alone it is small (libgcrypt and libgpg-error); libcrypto was the largest object mapped at
 * start-up (4.7 MB, thousands of relocations, and openssl.cnf read on first use) for one digest.
 * libgcrypt picks the CPU's SHA extensions or AVX2 where present, as libcrypto did. */
#include <gcrypt.h>

#include "hash.h"

struct Sha256 {
        gcry_md_hd_t md;
};

/* libgcrypt wants its user to initialize it once; libsystemd does the same, so whoever comes
 * first does it and the other sees it done. No secure memory: nothing hashed here is a secret,
 * and secure memory would want mlock() and warn without it. */
static int gcrypt_init(void) {
        if (gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P))
                return 0;
        if (!gcry_check_version("1.8.0"))
                return -EOPNOTSUPP;
        (void) gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
        (void) gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
        return 0;
}

int sha256_new(Sha256 **ret) {
        _cleanup_free_ Sha256 *h = NULL;
        int r;

        r = gcrypt_init();
        if (r < 0)
                return r;
        h = calloc(1, sizeof(Sha256));
        if (!h)
                return -ENOMEM;
        if (gcry_md_open(&h->md, GCRY_MD_SHA256, 0) != 0)
                return -EIO;
        *ret = TAKE_PTR(h);
        return 0;
}

Sha256 *sha256_free(Sha256 *h) {
        if (!h)
                return NULL;
        gcry_md_close(h->md);
        free(h);
        return NULL;
}

int sha256_update(Sha256 *h, const void *data, size_t n) {
        gcry_md_write(h->md, data, n);
        return 0;
}

int sha256_final_hex(Sha256 *h, char hex[static SHA256_HEX_SIZE]) {
        static const char digits[] = "0123456789abcdef";
        const unsigned char *md;

        md = gcry_md_read(h->md, GCRY_MD_SHA256);
        if (!md)
                return -EIO;
        for (unsigned i = 0; i < SHA256_DIGEST_SIZE; i++) {
                hex[i * 2] = digits[md[i] >> 4];
                hex[i * 2 + 1] = digits[md[i] & 0xf];
        }
        hex[SHA256_HEX_SIZE - 1] = '\0';
        return 0;
}
int sha256_fd(int fd, char hex[static SHA256_HEX_SIZE], uint64_t *ret_size) {
        _cleanup_(sha256_freep) Sha256 *h = NULL;
        char buf[65536];
        uint64_t total = 0;
        int r;

        r = sha256_new(&h);
        if (r < 0)
                return r;
        for (;;) {
                ssize_t k = read(fd, buf, sizeof(buf));
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                r = sha256_update(h, buf, k);
                if (r < 0)
                        return r;
                total += k;
        }
        r = sha256_final_hex(h, hex);
        if (r < 0)
                return r;
        if (ret_size)
                *ret_size = total;
        return 0;
}

int sha256_buffer_hex(const void *data, size_t n, char hex[static SHA256_HEX_SIZE]) {
        _cleanup_(sha256_freep) Sha256 *h = NULL;
        int r;

        r = sha256_new(&h);
        if (r < 0)
                return r;
        r = sha256_update(h, data, n);
        if (r < 0)
                return r;
        return sha256_final_hex(h, hex);
}
