/* See session.h. session.json is written atomically (a temporary file renamed into place) and is
 * the only thing read back; the directory name is the id. */
#include <dirent.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

#include "error.h"
#include "fileio.h"
#include "json-exact.h"
#include "random-id.h"
#include "session.h"

#define SESSION_JSON "session.json"
#define SESSION_JSON_MAX (64U * 1024U)
/* Where a session goes while it is being removed: invisible to load and list. */
#define SESSION_REMOVING_PREFIX ".rm-"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

static void closedirp(DIR **d) {
        if (*d)
                (void) closedir(*d);
}

Session *session_free(Session *s) {
        if (!s)
                return NULL;
        free(s->skill);
        free(s);
        return NULL;
}

void session_freev(Session **v, size_t n) {
        for (size_t i = 0; v && i < n; i++)
                session_free(v[i]);
        free(v);
}

SessionStore *session_store_free(SessionStore *s) {
        if (!s)
                return NULL;
        safe_close(s->dir_fd);
        free(s->path);
        free(s);
        return NULL;
}

int session_store_open(const char *path, SessionStore **ret, char **error) {
        _cleanup_(session_store_freep) SessionStore *s = NULL;
        int r;

        r = mkdir_p_at(AT_FDCWD, path, 0700);
        if (r < 0)
                return error_setf(error, r, "Failed to create the session store %s: %s", path, strerror(-r));
        s = calloc(1, sizeof(SessionStore));
        if (!s)
                return -ENOMEM;
        s->path = strdup(path);
        if (!s->path)
                return -ENOMEM;
        s->dir_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (s->dir_fd < 0)
                return error_setf(error, -errno, "Failed to open the session store %s: %m", path);
        *ret = TAKE_PTR(s);
        return 0;
}

int session_store_user_path(char **ret) {
        const char *state = secure_getenv("XDG_STATE_HOME"), *home = secure_getenv("HOME");
        char *p;

        if (!isempty(state) && state[0] == '/')
                p = strdup_printf("%s/skilld/sessions", state);
        else if (!isempty(home) && home[0] == '/')
                p = strdup_printf("%s/.local/state/skilld/sessions", home);
        else
                return -ENXIO;
        if (!p)
                return -ENOMEM;
        *ret = p;
        return 0;
}

bool session_id_valid(const char *id) {
        if (!id || strlen(id) != SESSION_ID_LEN)
                return false;
        for (const char *p = id; *p; p++)
                if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
                        return false;
        return true;
}

static uint64_t json_u64(const cJSON *o, const char *key, bool *ok) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || v->valuedouble > 9007199254740992.0) {
                *ok = false;
                return 0;
        }
        return (uint64_t) v->valuedouble;
}

int session_to_json(const Session *s, cJSON **ret) {
        _cleanup_(cJSON_Deletep) cJSON *o = cJSON_CreateObject();

        if (!o || !cJSON_AddStringToObject(o, "id", s->id) ||
            !cJSON_AddNumberToObject(o, "owner", s->owner) ||
            !cJSON_AddStringToObject(o, "skill", s->skill) ||
            !json_add_uint64(o, "created_usec", s->created_usec) ||
            !json_add_uint64(o, "used_usec", s->used_usec) ||
            !json_add_uint64(o, "ttl_usec", s->ttl_usec) ||
            !json_add_uint64(o, "expires_usec", s->used_usec + s->ttl_usec) ||
            !json_add_uint64(o, "quota_bytes", s->quota_bytes))
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

static int session_write(int session_fd, const Session *s) {
        _cleanup_(cJSON_Deletep) cJSON *o = NULL;
        _cleanup_free_ char *text = NULL;
        int r;

        r = session_to_json(s, &o);
        if (r < 0)
                return r;
        text = cJSON_Print(o);
        if (!text)
                return -ENOMEM;
        return write_file_atomic_at(session_fd, SESSION_JSON, text, strlen(text), 0600);
}

static int session_read(int session_fd, const char *id, Session **ret) {
        _cleanup_(session_freep) Session *s = NULL;
        _cleanup_(cJSON_Deletep) cJSON *o = NULL;
        _cleanup_free_ char *text = NULL;
        const cJSON *skill;
        bool ok = true;
        int r;

        r = read_full_file_at(session_fd, SESSION_JSON, SESSION_JSON_MAX, true, &text, NULL);
        if (r < 0)
                return r;
        o = cJSON_Parse(text);
        if (!o)
                return -EBADMSG;
        s = calloc(1, sizeof(Session));
        if (!s)
                return -ENOMEM;
        memcpy(s->id, id, SESSION_ID_LEN + 1);
        s->owner = (uid_t) json_u64(o, "owner", &ok);
        s->created_usec = json_u64(o, "created_usec", &ok);
        s->used_usec = json_u64(o, "used_usec", &ok);
        s->ttl_usec = json_u64(o, "ttl_usec", &ok);
        s->quota_bytes = json_u64(o, "quota_bytes", &ok);
        skill = cJSON_GetObjectItemCaseSensitive(o, "skill");
        if (!ok || !cJSON_IsString(skill))
                return -EBADMSG;
        s->skill = strdup(skill->valuestring);
        if (!s->skill)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

static uint64_t now_realtime(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

int session_create(SessionStore *st, uid_t owner, const char *skill, uint64_t ttl_usec, uint64_t quota,
                   unsigned max_per_user, Session **ret, char **error) {
        _cleanup_(session_freep) Session *s = NULL;
        _cleanup_close_ int fd = -EBADF;
        Session **all = NULL;
        size_t n = 0, mine = 0;
        int r;

        r = session_list(st, &all, &n);
        if (r < 0)
                return error_setf(error, r, "Failed to read the session store: %s", strerror(-r));
        for (size_t i = 0; i < n; i++)
                mine += all[i]->owner == owner;
        session_freev(all, n);
        if (mine >= max_per_user)
                return error_setf(error, -EUSERS, "You have %zu sessions, the most allowed; remove one first "
                                  "(skillctl session rm)", mine);

        s = calloc(1, sizeof(Session));
        if (!s)
                return -ENOMEM;
        r = random_id(s->id);
        if (r < 0)
                return error_setf(error, r, "Failed to make a session id: %s", strerror(-r));
        s->owner = owner;
        s->skill = strdup(skill);
        if (!s->skill)
                return -ENOMEM;
        s->created_usec = s->used_usec = now_realtime();
        s->ttl_usec = ttl_usec;
        s->quota_bytes = quota;

        if (mkdirat(st->dir_fd, s->id, 0700) < 0)
                return error_setf(error, -errno, "Failed to create session %s: %m", s->id);
        fd = openat(st->dir_fd, s->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        r = fd < 0 ? -errno : 0;
        if (r >= 0 && mkdirat(fd, "work", 0700) < 0)
                r = -errno;
        if (r >= 0)
                r = session_write(fd, s);
        if (r < 0) {
                (void) rm_rf_at(st->dir_fd, s->id);
                return error_setf(error, r, "Failed to create session %s: %s", s->id, strerror(-r));
        }
        *ret = TAKE_PTR(s);
        return 0;
}

int session_load(SessionStore *st, const char *id, Session **ret) {
        _cleanup_close_ int fd = -EBADF;

        if (!session_id_valid(id))
                return -EINVAL;
        fd = openat(st->dir_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return session_read(fd, id, ret);
}

int session_list(SessionStore *st, Session ***ret, size_t *ret_n) {
        _cleanup_(closedirp) DIR *d = NULL;
        Session **v = NULL;
        size_t n = 0;
        struct dirent *de;

        d = opendir_dup(st->dir_fd);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                Session *s = NULL, **nv;

                if (!session_id_valid(de->d_name) || session_load(st, de->d_name, &s) < 0 || !s)
                        continue;
                nv = reallocarray(v, n + 1, sizeof(Session *));
                if (!nv) {
                        session_free(s);
                        session_freev(v, n);
                        return -ENOMEM;
                }
                v = nv;
                v[n++] = s;
        }
        /* Oldest first; few sessions, insertion sort. */
        for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && v[j - 1]->created_usec > v[j]->created_usec; j--) {
                        Session *t = v[j];
                        v[j] = v[j - 1];
                        v[j - 1] = t;
                }
        *ret = v;
        *ret_n = n;
        return 0;
}

int session_open_locked(SessionStore *st, const char *id, int *ret_fd) {
        _cleanup_close_ int fd = -EBADF;

        if (!session_id_valid(id))
                return -EINVAL;
        fd = openat(st->dir_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0)
                return errno == EWOULDBLOCK ? -EBUSY : -errno;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int session_remove(SessionStore *st, const char *id) {
        _cleanup_free_ char *away = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        /* Not while a run uses it: its /work would come back into a removed session. */
        r = session_open_locked(st, id, &fd);
        if (r < 0)
                return r;
        away = strdup_printf(SESSION_REMOVING_PREFIX "%s", id);
        if (!away)
                return -ENOMEM;
        if (renameat(st->dir_fd, id, st->dir_fd, away) < 0)
                return -errno;
        return rm_rf_at(st->dir_fd, away);
}

int session_touch(SessionStore *st, Session *s, uint64_t now_usec) {
        _cleanup_close_ int fd = -EBADF;

        fd = openat(st->dir_fd, s->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        s->used_usec = now_usec;
        return session_write(fd, s);
}

bool session_expired(const Session *s, uint64_t now_usec) {
        return s->used_usec + s->ttl_usec <= now_usec;
}

int session_gc(SessionStore *st, uint64_t now_usec) {
        _cleanup_(closedirp) DIR *d = NULL;
        Session **v = NULL;
        size_t n = 0;
        struct dirent *de;
        int r, removed = 0;

        r = session_list(st, &v, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if (session_expired(v[i], now_usec) && session_remove(st, v[i]->id) >= 0)
                        removed++;
        session_freev(v, n);

        /* Removals a crash interrupted. */
        d = opendir_dup(st->dir_fd);
        if (!d)
                return removed;
        while ((de = readdir(d)))
                if (startswith(de->d_name, SESSION_REMOVING_PREFIX))
                        (void) rm_rf_at(st->dir_fd, de->d_name);
        return removed;
}

int session_usage(SessionStore *st, const char *id, uint64_t *ret) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;
        uint64_t total = 0;
        int r;

        if (!session_id_valid(id))
                return -EINVAL;
        path = strdup_printf("%s/work", id);
        if (!path)
                return -ENOMEM;
        fd = openat(st->dir_fd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = dir_usage_at(fd, &total, NULL);
        if (r < 0)
                return r;
        *ret = total;
        return 0;
}
