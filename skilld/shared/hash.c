/* See hash.h. */
#include <openssl/evp.h>

#include "hash.h"

struct Sha256 {
        EVP_MD_CTX *ctx;
};

int sha256_new(Sha256 **ret) {
        Sha256 *h;

        h = calloc(1, sizeof(Sha256));
        if (!h)
                return -ENOMEM;
        h->ctx = EVP_MD_CTX_new();
        if (!h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1) {
                sha256_free(h);
                return -EIO;
        }
        *ret = h;
        return 0;
}

Sha256 *sha256_free(Sha256 *h) {
        if (!h)
                return NULL;
        EVP_MD_CTX_free(h->ctx);
        free(h);
        return NULL;
}

int sha256_update(Sha256 *h, const void *data, size_t n) {
        return EVP_DigestUpdate(h->ctx, data, n) == 1 ? 0 : -EIO;
}

int sha256_final_hex(Sha256 *h, char hex[static SHA256_HEX_SIZE]) {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned len = 0;

        if (EVP_DigestFinal_ex(h->ctx, md, &len) != 1 || len != SHA256_DIGEST_SIZE)
                return -EIO;
        for (unsigned i = 0; i < len; i++)
                sprintf(hex + i * 2, "%02x", md[i]);
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
