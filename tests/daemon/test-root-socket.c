/* Tests for root-socket.c: the root socket is at its path only once it listens (a client that finds
 * it can connect), replaces what a killed instance left, is 0600, and leaves nothing behind when it
 * cannot be made; accepting hands out the peer's uid and says when nobody waits. */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "root-socket.h"
#include "test-util.h"

static int connect_to(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        ck_assert_uint_lt(strlen(path), sizeof(sa.sun_path));
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(fd, 0);
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int saved = -errno;

                safe_close(fd);
                return saved;
        }
        return fd;
}

START_TEST(test_listen_accept) {
        _cleanup_test_dir_ TestDir d = test_dir_new();
        _cleanup_free_ char *path = strjoin_path(d.path, ROOT_SOCKET_NAME),
                            *temp = strdup_printf("%s" ROOT_SOCKET_TEMP_SUFFIX, path);
        _cleanup_close_ int fd = -EBADF, client = -EBADF, accepted = -EBADF;
        struct stat st;
        uid_t uid = 4242;

        /* What a killed instance left: a stale socket nobody listens on, and a half-made one. */
        test_write_file(d.fd, ROOT_SOCKET_NAME, "", 0644);
        test_write_file(d.fd, ROOT_SOCKET_NAME ROOT_SOCKET_TEMP_SUFFIX, "", 0644);

        ck_assert_int_eq(root_socket_listen(path, &fd), 0);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(lstat(path, &st), 0);
        ck_assert(S_ISSOCK(st.st_mode));
        ck_assert_uint_eq(st.st_mode & 07777, 0600);
        ck_assert_int_eq(lstat(temp, &st), -1);
        ck_assert_int_eq(errno, ENOENT);

        /* Nobody waits yet: 0, and the out-parameters untouched. */
        accepted = 77;
        ck_assert_int_eq(socket_accept_peer(fd, &accepted, &uid), 0);
        ck_assert_int_eq(accepted, 77);
        ck_assert_uint_eq(uid, 4242);
        accepted = -EBADF;

        client = connect_to(path);
        ck_assert_int_ge(client, 0);
        ck_assert_int_eq(socket_accept_peer(fd, &accepted, &uid), 1);
        ck_assert_int_ge(accepted, 0);
        ck_assert_uint_eq(uid, getuid());
        ck_assert_int_ne(fcntl(accepted, F_GETFD) & FD_CLOEXEC, 0);
        ck_assert_int_ne(fcntl(accepted, F_GETFL) & O_NONBLOCK, 0);
}
END_TEST

START_TEST(test_failures_leave_nothing) {
        _cleanup_test_dir_ TestDir d = test_dir_new();
        _cleanup_free_ char *missing = strdup_printf("%s/no-such-dir/%s", d.path, ROOT_SOCKET_NAME),
                            *longest = NULL;
        char name[128];
        int fd = -EBADF;

        ck_assert_int_eq(root_socket_listen(missing, &fd), -ENOENT);
        ck_assert_int_eq(fd, -EBADF);

        /* A path the socket address cannot hold, its temporary name included. */
        memset(name, 'x', sizeof(name) - 1);
        name[sizeof(name) - 1] = '\0';
        longest = strjoin_path(d.path, name);
        ck_assert_int_eq(root_socket_listen(longest, &fd), -ENAMETOOLONG);
        ck_assert_int_eq(root_socket_listen("", &fd), -ENAMETOOLONG);
        ck_assert_int_eq(fd, -EBADF);
        ck_assert_uint_eq(test_count_entries(d.path), 0);
}
END_TEST

int main(void) {
        Suite *s = suite_create("root-socket");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_listen_accept);
        tcase_add_test(tc, test_failures_leave_nothing);
        suite_add_tcase(s, tc);
        return test_run_suite(s);
}
