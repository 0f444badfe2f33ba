/* See random-id.h. */
#include <errno.h>
#include <stdint.h>
#include <sys/random.h>

#include "random-id.h"

int random_id(char ret[static RANDOM_ID_STRING_MAX]) {
        static const char hex[] = "0123456789abcdef";
        uint8_t b[16];
        size_t have = 0;

        while (have < sizeof(b)) {
                ssize_t n = getrandom(b + have, sizeof(b) - have, 0);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                have += (size_t) n;
        }
        /* RFC 4122: version 4 (random), variant 1. */
        b[6] = (b[6] & 0x0F) | 0x40;
        b[8] = (b[8] & 0x3F) | 0x80;
        for (size_t i = 0; i < sizeof(b); i++) {
                ret[i * 2] = hex[b[i] >> 4];
                ret[i * 2 + 1] = hex[b[i] & 0x0F];
        }
        ret[sizeof(b) * 2] = '\0';
        return 0;
}
