/* See root-socket.h. */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "fileio.h"
#include "root-socket.h"
#include "util.h"

int root_socket_listen(const char *path, int *ret_fd) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *temp = NULL;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t len;

        /* Bound and listening under a temporary name, then renamed into place: a client that
         * sees the path can connect. A socket is connectable from bind(), but refuses everyone
         * (ECONNREFUSED) until listen(); a client finding it in between would take the service
         * for dead. */
        temp = strdup_printf("%s" ROOT_SOCKET_TEMP_SUFFIX, path);
        if (!temp)
                return -ENOMEM;
        len = strlen(temp);
        if (strlen(path) == 0 || len >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, temp, len + 1);

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        /* Only the holder of the bus name gets here: what is there is a dead instance's. */
        if (unlink(temp) < 0 && errno != ENOENT)
                return -errno;
        /* The service's umask (0077, main()) makes it root's from the start: connecting takes
         * write access. The umask is not changed here: it is the whole process's, threads
         * included. */
        if (bind(fd, (const struct sockaddr *) &sa, offsetof(struct sockaddr_un, sun_path) + len + 1) < 0)
                return -errno;
        /* rename() replaces a stale socket at path in the same step. */
        if (chmod(temp, 0600) < 0 || listen(fd, SOMAXCONN) < 0 || rename(temp, path) < 0) {
                int saved = -errno;

                (void) unlink(temp);
                return saved;
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int socket_accept_peer(int listen_fd, int *ret_fd, uid_t *ret_uid) {
        _cleanup_close_ int fd = -EBADF;
        struct ucred cred = {};
        socklen_t len = sizeof(cred);

        for (;;) {
                fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd >= 0)
                        break;
                if (errno == EAGAIN)
                        return 0;
                /* The client gave up before we got to it: the next one. */
                if (errno != EINTR && errno != ECONNABORTED)
                        return -errno;
        }
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return -errno;
        *ret_fd = TAKE_FD(fd);
        *ret_uid = cred.uid;
        return 1;
}
