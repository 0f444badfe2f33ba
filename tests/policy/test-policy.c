/* Tests for skilld/policy: every key, the layering of files, each class of error with the line it
 * names, validation across layers, and that the shipped policy.yaml equals the compiled defaults. */
#include <sys/stat.h>

#include "policy.h"
#include "test-util.h"

static TestDir dir = { .fd = -EBADF };

static char *mfree_str(char *s) {
        free(s);
        return NULL;
}

/* Each test runs in its own forked process (CK_FORK) inside a scratch directory, so that file
 * names in messages are the short relative ones an admin sees. */
static void setup(void) {
        dir = test_dir_new();
        ck_assert_int_eq(fchdir(dir.fd), 0);
}

static void teardown(void) {
        ck_assert_int_eq(chdir("/"), 0);
        test_dir_done(&dir);
}

static void put(const char *name, const char *yaml) {
        test_write_file(dir.fd, name, yaml, 0644);
}

/* Checks a policy text and returns its problems (NULL when it is clean). */
static char **check(const char *yaml) {
        char **errors = NULL;
        int r;

        put("policy.yaml", yaml);
        r = policy_check_file("policy.yaml", &errors);
        if (r >= 0) {
                ck_assert_ptr_null(errors);
                return NULL;
        }
        ck_assert_int_gt((int) strv_length(errors), 0);
        return errors;
}

/* Asserts that the text yields exactly one problem, equal to expected. */
static void check_one(const char *yaml, const char *expected) {
        _cleanup_strv_free_ char **errors = check(yaml);

        ck_assert_ptr_nonnull(errors);
        ck_assert_msg(strv_length(errors) == 1 && streq(errors[0], expected),
                      "expected \"%s\", got \"%s\" (%zu problems)",
                      expected, errors[0], strv_length(errors));
}

static Policy *load_one(const char *yaml) {
        char * const paths[] = { (char *) "policy.yaml", NULL };
        _cleanup_strv_free_ char **errors = NULL;
        Policy *p = NULL;
        int r;

        put("policy.yaml", yaml);
        r = policy_load_files(paths, 0, &p, &errors);
        ck_assert_msg(r == 0, "load failed: %s", errors ? errors[0] : "?");
        return p;
}

START_TEST(test_defaults_valid) {
        _cleanup_(policy_freep) Policy *p = NULL;
        _cleanup_strv_free_ char **errors = NULL;

        ck_assert_int_eq(policy_new_default(&p), 0);
        ck_assert_int_eq(policy_validate(p, &errors), 0);
        ck_assert_ptr_null(errors);
        ck_assert_uint_eq(p->defaults.value[POLICY_LIMIT_MEMORY], 512ULL << 20);
        ck_assert_uint_eq(p->defaults.value[POLICY_LIMIT_TIMEOUT], 60ULL * 1000000);
        ck_assert_uint_ge(p->uid_first, 65536);
        ck_assert_uint_ge(p->uid_count, p->max_active);
}
END_TEST

static void assert_policy_equal(const Policy *a, const Policy *b) {
        for (PolicyLimit l = 0; l < _POLICY_LIMIT_MAX; l++) {
                ck_assert_msg(a->defaults.value[l] == b->defaults.value[l], "default %s differs",
                              policy_limit_to_string(l));
                ck_assert_msg(a->maximums.value[l] == b->maximums.value[l], "max %s differs",
                              policy_limit_to_string(l));
        }
        ck_assert_uint_eq(a->uid_first, b->uid_first);
        ck_assert_uint_eq(a->uid_count, b->uid_count);
        ck_assert_int_eq(a->uid_allow_low, b->uid_allow_low);
        ck_assert_uint_eq(a->max_active_per_user, b->max_active_per_user);
        ck_assert_uint_eq(a->max_active, b->max_active);
        ck_assert_uint_eq(a->max_queued_per_user, b->max_queued_per_user);
        ck_assert_uint_eq(a->max_queued, b->max_queued);
        ck_assert_uint_eq(a->retention.max_runs, b->retention.max_runs);
        ck_assert_uint_eq(a->retention.max_bytes, b->retention.max_bytes);
        ck_assert_uint_eq(a->retention.max_age_usec, b->retention.max_age_usec);
        ck_assert_uint_eq(a->retention.max_runs_per_user, b->retention.max_runs_per_user);
        ck_assert_uint_eq(a->retention.max_bytes_per_user, b->retention.max_bytes_per_user);
        ck_assert_uint_eq(a->min_free_bytes, b->min_free_bytes);
        ck_assert_uint_eq(a->min_free_percent, b->min_free_percent);
        ck_assert_uint_eq(a->isolation_may_be_missing, b->isolation_may_be_missing);
        ck_assert_uint_eq(strv_length(a->network_skills), strv_length(b->network_skills));
        ck_assert_uint_eq(strv_length(a->network_hashes), strv_length(b->network_hashes));
        ck_assert_uint_eq(a->idle_timeout_usec, b->idle_timeout_usec);
        ck_assert_uint_eq(strv_length(a->env_resolvers), strv_length(b->env_resolvers));
        for (size_t i = 0; i < strv_length(a->env_resolvers); i++)
                ck_assert_str_eq(a->env_resolvers[i], b->env_resolvers[i]);
        ck_assert_str_eq(strempty(a->env_pip_index_url), strempty(b->env_pip_index_url));
        ck_assert_uint_eq(strv_length(a->env_pip_find_links), strv_length(b->env_pip_find_links));
        for (size_t i = 0; i < strv_length(a->env_pip_find_links); i++)
                ck_assert_str_eq(a->env_pip_find_links[i], b->env_pip_find_links[i]);
        ck_assert_uint_eq(a->env_max_count, b->env_max_count);
        ck_assert_uint_eq(a->env_max_bytes, b->env_max_bytes);
        ck_assert_uint_eq(a->env_max_builds_per_user, b->env_max_builds_per_user);
        ck_assert_uint_eq(a->env_max_builds, b->env_max_builds);
}

START_TEST(test_shipped_file_equals_defaults) {
        _cleanup_(policy_freep) Policy *shipped = NULL, *builtin = NULL;
        _cleanup_strv_free_ char **errors = NULL;
        _cleanup_free_ char *path = test_source_path("policy/policy.yaml");
        char * const paths[] = { path, NULL };

        ck_assert_int_eq(policy_check_file(path, &errors), 0);
        ck_assert_int_eq(policy_load_files(paths, 0, &shipped, &errors), 0);
        ck_assert_int_eq(policy_new_default(&builtin), 0);
        assert_policy_equal(shipped, builtin);
}
END_TEST

static const char every_key[] =
        "limits:\n"
        "  memory: {default: 1G, max: 2G}\n"
        "  tasks: {default: 10, max: 20}\n"
        "  cpu: {default: 50%, max: 150}\n"
        "  timeout: {default: 90s, max: 2h}\n"
        "  stdout: {default: 1M, max: 2M}\n"
        "  stderr: {default: 3M, max: 4M}\n"
        "  output: {default: 5M, max: 6M}\n"
        "  tmpfs: {default: 7M, max: 8M}\n"
        "uids:\n"
        "  first: 40000\n"
        "  count: 100\n"
        "  allow-low: yes\n"
        "concurrency:\n"
        "  per-user: 2\n"
        "  global: 3\n"
        "queue:\n"
        "  per-user: 0\n"
        "  global: 5\n"
        "retention:\n"
        "  max-runs: infinity\n"
        "  max-bytes: 10G\n"
        "  max-age: 1.5d\n"
        "  per-user:\n"
        "    max-runs: 7\n"
        "    max-bytes: infinity\n"
        "store:\n"
        "  min-free: 1G\n"
        "  min-free-percent: 10%\n"
        "isolation:\n"
        "  may-be-missing: [netns, cgroup]\n"
        "network:\n"
        "  allowed-skills:\n"
        "    - web-fetch\n"
        "    - sha256:ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789\n"
        "service:\n"
        "  idle-timeout: 2min\n"
        "environments:\n"
        "  resolvers: [pip, debian]\n"
        "  pip-index-url: http://127.0.0.1:8080/simple/\n"
        "  pip-find-links: [/srv/wheels, http://127.0.0.1:8081/wheels/]\n"
        "  max-count: 3\n"
        "  max-size: infinity\n"
        "  builds:\n"
        "    per-user: 2\n"
        "    global: 6\n";

START_TEST(test_every_key) {
        _cleanup_(policy_freep) Policy *p = load_one(every_key);
        const uint64_t sec = 1000000;

        ck_assert_uint_eq(p->defaults.value[POLICY_LIMIT_MEMORY], 1ULL << 30);
        ck_assert_uint_eq(p->maximums.value[POLICY_LIMIT_MEMORY], 2ULL << 30);
        ck_assert_uint_eq(p->defaults.value[POLICY_LIMIT_TASKS], 10);
        ck_assert_uint_eq(p->maximums.value[POLICY_LIMIT_TASKS], 20);
        ck_assert_uint_eq(p->defaults.value[POLICY_LIMIT_CPU], 50);
        ck_assert_uint_eq(p->maximums.value[POLICY_LIMIT_CPU], 150);
        ck_assert_uint_eq(p->defaults.value[POLICY_LIMIT_TIMEOUT], 90 * sec);
        ck_assert_uint_eq(p->maximums.value[POLICY_LIMIT_TIMEOUT], 7200 * sec);
        ck_assert_uint_eq(p->defaults.value[POLICY_LIMIT_STDOUT], 1ULL << 20);
        ck_assert_uint_eq(p->maximums.value[POLICY_LIMIT_STDOUT], 2ULL << 20);
        ck_assert_uint_eq(p->defaults.value[POLICY_LIMIT_STDERR], 3ULL << 20);
        ck_assert_uint_eq(p->maximums.value[POLICY_LIMIT_STDERR], 4ULL << 20);
        ck_assert_uint_eq(p->defaults.value[POLICY_LIMIT_OUTPUT], 5ULL << 20);
        ck_assert_uint_eq(p->maximums.value[POLICY_LIMIT_OUTPUT], 6ULL << 20);
        ck_assert_uint_eq(p->defaults.value[POLICY_LIMIT_TMPFS], 7ULL << 20);
        ck_assert_uint_eq(p->maximums.value[POLICY_LIMIT_TMPFS], 8ULL << 20);
        ck_assert_uint_eq(p->uid_first, 40000);
        ck_assert_uint_eq(p->uid_count, 100);
        ck_assert(p->uid_allow_low);
        ck_assert_uint_eq(p->max_active_per_user, 2);
        ck_assert_uint_eq(p->max_active, 3);
        ck_assert_uint_eq(p->max_queued_per_user, 0);
        ck_assert_uint_eq(p->max_queued, 5);
        ck_assert_uint_eq(p->retention.max_runs, POLICY_INFINITY);
        ck_assert_uint_eq(p->retention.max_bytes, 10ULL << 30);
        ck_assert_uint_eq(p->retention.max_age_usec, 36 * 3600 * sec);
        ck_assert_uint_eq(p->retention.max_runs_per_user, 7);
        ck_assert_uint_eq(p->retention.max_bytes_per_user, POLICY_INFINITY);
        ck_assert_uint_eq(p->min_free_bytes, 1ULL << 30);
        ck_assert_uint_eq(p->min_free_percent, 10);
        ck_assert(policy_layer_may_be_missing(p, SANDBOX_LAYER_NETNS));
        ck_assert(policy_layer_may_be_missing(p, SANDBOX_LAYER_CGROUP));
        ck_assert(!policy_layer_may_be_missing(p, SANDBOX_LAYER_SECCOMP));
        ck_assert_uint_eq(p->isolation_may_be_missing, SANDBOX_LAYER_NETNS | SANDBOX_LAYER_CGROUP);
        ck_assert_uint_eq(strv_length(p->network_skills), 1);
        ck_assert_str_eq(p->network_skills[0], "web-fetch");
        ck_assert_uint_eq(strv_length(p->network_hashes), 1);
        ck_assert_str_eq(p->network_hashes[0],
                         "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789");
        ck_assert_uint_eq(p->idle_timeout_usec, 120 * sec);
        ck_assert_uint_eq(strv_length(p->env_resolvers), 2);
        ck_assert_str_eq(p->env_resolvers[0], "pip");
        ck_assert_str_eq(p->env_pip_index_url, "http://127.0.0.1:8080/simple/");
        ck_assert_uint_eq(strv_length(p->env_pip_find_links), 2);
        ck_assert_str_eq(p->env_pip_find_links[0], "/srv/wheels");
        ck_assert_str_eq(p->env_pip_find_links[1], "http://127.0.0.1:8081/wheels/");
        ck_assert_uint_eq(p->env_max_count, 3);
        ck_assert_uint_eq(p->env_max_bytes, POLICY_INFINITY);
        ck_assert_uint_eq(p->env_max_builds_per_user, 2);
        ck_assert_uint_eq(p->env_max_builds, 6);
        {
                int order[3];

                ck_assert_uint_eq(policy_env_resolvers(p, order), 2);
                ck_assert_int_eq(order[0], 1);
                ck_assert_int_eq(order[1], 0);
        }
}
END_TEST

START_TEST(test_empty_files) {
        _cleanup_(policy_freep) Policy *a = load_one(""), *b = load_one("# only a comment\n"),
                                       *c = load_one("---\n"), *d = NULL, *e = NULL;

        ck_assert_int_eq(policy_new_default(&d), 0);
        assert_policy_equal(a, d);
        assert_policy_equal(b, d);
        assert_policy_equal(c, d);

        /* A section whose keys are all commented out is empty, not an error. */
        e = load_one("limits:\n  # memory:\n  #   max: 8G\nretention:\n  per-user: ~\n");
        assert_policy_equal(e, d);
}
END_TEST

/* The admin file changes one key; the rest of the vendor file stays. Lists replace lists. */
START_TEST(test_layering) {
        char * const paths[] = { (char *) "vendor.yaml", (char *) "missing.yaml", (char *) "admin.yaml",
                                NULL };
        _cleanup_(policy_freep) Policy *p = NULL;
        _cleanup_strv_free_ char **errors = NULL;

        put("vendor.yaml",
            "limits:\n"
            "  memory: {default: 256M, max: 1G}\n"
            "  tasks: {default: 64, max: 128}\n"
            "isolation:\n"
            "  may-be-missing: [netns, seccomp]\n");
        put("admin.yaml",
            "limits:\n"
            "  memory:\n"
            "    max: 8G\n"
            "isolation:\n"
            "  may-be-missing: [cgroup]\n");

        ck_assert_int_eq(policy_load_files(paths, POLICY_LOAD_MISSING_OK, &p, &errors), 0);
        ck_assert_uint_eq(p->defaults.value[POLICY_LIMIT_MEMORY], 256ULL << 20);       /* vendor */
        ck_assert_uint_eq(p->maximums.value[POLICY_LIMIT_MEMORY], 8ULL << 30);         /* admin */
        ck_assert_uint_eq(p->defaults.value[POLICY_LIMIT_TASKS], 64);                  /* vendor */
        ck_assert_uint_eq(p->defaults.value[POLICY_LIMIT_TIMEOUT], 60ULL * 1000000);   /* built in */
        ck_assert(policy_layer_may_be_missing(p, SANDBOX_LAYER_CGROUP));
        ck_assert(!policy_layer_may_be_missing(p, SANDBOX_LAYER_NETNS));               /* replaced */
        ck_assert(!policy_layer_may_be_missing(p, SANDBOX_LAYER_SECCOMP));
        p = policy_free(p);

        /* An empty list value empties the list of the layer below. */
        put("admin.yaml", "isolation:\n  may-be-missing:\n");
        ck_assert_int_eq(policy_load_files(paths, POLICY_LOAD_MISSING_OK, &p, &errors), 0);
        ck_assert_uint_eq(p->isolation_may_be_missing, 0);
        p = policy_free(p);

        /* Without MISSING_OK a missing layer is an error. */
        ck_assert_int_eq(policy_load_files(paths, 0, &p, &errors), -ENOENT);
        ck_assert_ptr_null(p);
        ck_assert(strv_contains(errors, "missing.yaml: no such file"));
}
END_TEST

START_TEST(test_value_errors) {
        check_one("limits:\n  memory:\n    default: 512M\n\n    max: 12Q\n",
                  "policy.yaml:5: limits.memory.max: not a size: '12Q' (like 512M or 4G)");
        check_one("limits:\n  tasks: {max: lots}\n",
                  "policy.yaml:2: limits.tasks.max: not a number: 'lots'");
        check_one("limits:\n  cpu:\n    max: -5%\n",
                  "policy.yaml:3: limits.cpu.max: not a percentage: '-5%' (like 50%)");
        check_one("limits:\n  timeout:\n    default: 1y\n",
                  "policy.yaml:3: limits.timeout.default: not a duration: '1y' (like 60s, 5min, 2h or 30d)");
        check_one("uids:\n  allow-low: perhaps\n",
                  "policy.yaml:2: uids.allow-low: not a boolean (yes or no): 'perhaps'");
        check_one("uids:\n  first: 0\n",
                  "policy.yaml:2: uids.first: 0 is root; runs must never execute as root");
        check_one("uids:\n  first: 4294967295\n",
                  "policy.yaml:2: uids.first: '4294967295' is above the maximum of 4294967293");
        check_one("limits:\n  memory: {default: 512K}\n",
                  "policy.yaml:2: limits.memory.default: '512K' is below the minimum of 1.0M");
        check_one("limits:\n  cpu: {max: 200000%}\n",
                  "policy.yaml:2: limits.cpu.max: '200000%' is above the maximum of 100000%");
        check_one("store:\n  min-free-percent: 100%\n",
                  "policy.yaml:2: store.min-free-percent: '100%' is above the maximum of 99%");
        check_one("concurrency:\n  global: 0\n",
                  "policy.yaml:2: concurrency.global: '0' is below the minimum of 1");
        check_one("limits:\n  memory:\n    max:\n",
                  "policy.yaml:3: limits.memory.max: no value given");
        check_one("limits:\n  memory:\n    max: \"1G\\0\"\n",
                  "policy.yaml:3: limits.memory.max: value is too long or holds control characters");
        /* infinity only where documented */
        check_one("limits:\n  memory: {max: infinity}\n",
                  "policy.yaml:2: limits.memory.max: not a size: 'infinity' (like 512M or 4G)");
        check_one("isolation:\n  may-be-missing: [netns, selinux]\n",
                  "policy.yaml:2: isolation.may-be-missing: unknown isolation layer 'selinux' "
                  "(known: netns, ipcns, utsns, cgroupns, seccomp, cgroup)");
        check_one("isolation:\n  may-be-missing: [pidns]\n",
                  "policy.yaml:2: isolation.may-be-missing: isolation layer 'pidns' can never be missing");
        check_one("network:\n  allowed-skills:\n    - ok-name\n    - sha256:1234\n",
                  "policy.yaml:4: network.allowed-skills: not a SHA-256 hash (sha256: and 64 hex digits): "
                  "'sha256:1234'");
        check_one("network:\n  allowed-skills: [Bad_Name]\n",
                  "policy.yaml:2: network.allowed-skills: not a skill name (a-z, 0-9 and inner "
                  "hyphens, at most 64) or sha256:HASH: 'Bad_Name'");
        check_one("environments:\n  resolvers: [debian, conda]\n",
                  "policy.yaml:2: environments.resolvers: unknown resolver 'conda' (known: debian, pip, npm)");
        check_one("environments:\n  resolvers: [pip, pip]\n",
                  "policy.yaml:2: environments.resolvers: resolver 'pip' is listed twice");
        check_one("environments:\n  pip-index-url: file:///srv/wheels\n",
                  "policy.yaml:2: environments.pip-index-url: not an http:// or https:// URL (or none): "
                  "'file:///srv/wheels'");
        check_one("environments:\n  pip-find-links: [wheels]\n",
                  "policy.yaml:2: environments.pip-find-links: not an absolute path of a wheelhouse or an "
                  "http:// or https:// URL: 'wheels'");
        check_one("environments:\n  pip-find-links: [\"/srv/w --index-url=http://x/\"]\n",
                  "policy.yaml:2: environments.pip-find-links: not an absolute path of a wheelhouse or an "
                  "http:// or https:// URL: '/srv/w --index-url=http://x/'");
        check_one("environments:\n  pip-find-links: [/srv/w, /srv/w]\n",
                  "policy.yaml:2: environments.pip-find-links: '/srv/w' is listed twice");
        /* A name with an escape sequence is shown escaped, never raw. */
        check_one("limits:\n  memory: {max: \"\\e[31m\"}\n",
                  "policy.yaml:2: limits.memory.max: value is too long or holds control characters");
}
END_TEST

START_TEST(test_structure_errors) {
        check_one("limits:\n  memroy:\n    max: 1G\n", "policy.yaml:2: limits.memroy: unknown key");
        check_one("limits: {}\nlimts: {}\n", "policy.yaml:2: limts: unknown key");
        check_one("limits:\n  memory:\n    max: 1G\n    max: 2G\n",
                  "policy.yaml:4: limits.memory.max: duplicate key");
        check_one("limits: {}\nlimits: {}\n", "policy.yaml:2: limits: duplicate key");
        check_one("limits:\n  memory: 1G\n",
                  "policy.yaml:2: limits.memory: expected a mapping of further keys, got a single value");
        check_one("limits:\n  memory:\n    max: [1G]\n",
                  "policy.yaml:3: limits.memory.max: expected a single value, got a list");
        check_one("limits:\n  memory:\n    max: {a: 1}\n",
                  "policy.yaml:3: limits.memory.max: expected a single value, got a mapping");
        check_one("isolation:\n  may-be-missing: netns\n",
                  "policy.yaml:2: isolation.may-be-missing: expected a list, got a single value");
        check_one("isolation:\n  may-be-missing: [[netns]]\n",
                  "policy.yaml:2: isolation.may-be-missing: list items must be single values, not a list");
        check_one("- limits\n",
                  "policy.yaml:1: the policy must be a mapping of sections (limits:, uids:, ...), "
                  "not a list");
        check_one("limits: {}\n---\nuids: {}\n", "policy.yaml:2: only one YAML document is allowed");
        check_one("? [a, b]\n: c\n", "policy.yaml:1: keys must be plain names, not a list");
}
END_TEST

START_TEST(test_hostile_yaml) {
        _cleanup_strv_free_ char **errors = NULL;
        char deep[4096] = "limits: ";

        check_one("limits:\n  memory: &m {max: 1G}\n  tasks: *m\n",
                  "policy.yaml:2: YAML anchors are not allowed");
        check_one("x: &a 1\n", "policy.yaml:1: YAML anchors are not allowed");
        check_one("limits:\n  tasks:\n    max: *undefined\n", "policy.yaml:3: YAML aliases are not allowed");
        check_one("limits:\n  tasks:\n    max: !!int 5\n",
                  "policy.yaml:3: YAML tags are not allowed ('tag:yaml.org,2002:int')");
        check_one("limits: !custom\n  tasks: {max: 5}\n",
                  "policy.yaml:1: YAML tags are not allowed ('!custom')");

        /* Deep nesting under an unknown key: skipped until the depth cap, then refused. */
        for (int i = 0; i < 1000; i++)
                strcat(deep, "[");
        errors = check(deep);
        ck_assert_ptr_nonnull(errors);
        ck_assert_str_eq(errors[0], "policy.yaml:1: limits: expected a mapping of further keys, got a list");
        ck_assert_str_eq(errors[1], "policy.yaml:1: nesting too deep");
        errors = strv_free(errors);

        /* A billion laughs needs aliases; the first anchor ends it. */
        errors = check("a: &a [\"lol\",\"lol\"]\nb: &b [*a,*a,*a]\nc: [*b,*b,*b]\n");
        ck_assert_ptr_nonnull(errors);
        ck_assert_str_eq(errors[0], "policy.yaml:1: YAML anchors are not allowed");
}
END_TEST

START_TEST(test_syntax_errors) {
        _cleanup_strv_free_ char **errors = NULL;

        errors = check("limits:\n  memory:\n    max: 1G\n   tasks: 3\n");
        ck_assert_ptr_nonnull(errors);
        ck_assert_uint_eq(strv_length(errors), 1);
        ck_assert_str_eq(errors[0],
                         "policy.yaml:4: syntax error: did not find expected key (while parsing a "
                         "block mapping from line 2)");
        errors = strv_free(errors);

        errors = check("limits: {memory: {max: 1G}\n");
        ck_assert_ptr_nonnull(errors);
        ck_assert_msg(startswith(errors[0], "policy.yaml:2: syntax error: "), "got %s", errors[0]);
        errors = strv_free(errors);

        /* Invalid UTF-8 is refused by the reader. */
        errors = check("limits:\n  memory: {max: \"\xc0\xaf\"}\n");
        ck_assert_ptr_nonnull(errors);
        ck_assert_msg(startswith(errors[0], "policy.yaml:2: syntax error: invalid"), "got %s", errors[0]);
}
END_TEST

START_TEST(test_file_errors) {
        _cleanup_strv_free_ char **errors = NULL;
        _cleanup_free_ char *big = NULL;
        _cleanup_close_ int fd = -EBADF;

        fd = open("nul.yaml", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(loop_write(fd, "limits: {}\n\0\n", 13), 0);
        ck_assert_int_eq(policy_check_file("nul.yaml", &errors), -EBADMSG);
        ck_assert_str_eq(errors[0], "nul.yaml: holds a NUL byte, not a text file");
        errors = strv_free(errors);

        big = malloc(POLICY_FILE_MAX + 2);
        ck_assert_ptr_nonnull(big);
        memset(big, '#', POLICY_FILE_MAX + 1);
        big[POLICY_FILE_MAX + 1] = 0;
        put("big.yaml", big);
        ck_assert_int_eq(policy_check_file("big.yaml", &errors), -EFBIG);
        ck_assert_str_eq(errors[0], "big.yaml: larger than 1024 KiB");
        errors = strv_free(errors);

        ck_assert_int_eq(mkdir("dir.yaml", 0755), 0);
        ck_assert_int_eq(policy_check_file("dir.yaml", &errors), -EBADFD);
        ck_assert_str_eq(errors[0], "dir.yaml: not a regular file");
        errors = strv_free(errors);

        ck_assert_int_eq(policy_check_file("nope.yaml", &errors), -ENOENT);
        ck_assert_str_eq(errors[0], "nope.yaml: no such file");
}
END_TEST

/* Value errors do not stop the parse: every problem of the file is listed at once. */
START_TEST(test_all_problems_listed) {
        _cleanup_strv_free_ char **errors = check("limits:\n"
                                                 "  memory: {max: 1X}\n"
                                                 "  tasks: {max: x}\n"
                                                 "bogus: 1\n"
                                                 "uids: {first: 0}\n");

        ck_assert_uint_eq(strv_length(errors), 4);
        ck_assert(startswith(errors[0], "policy.yaml:2: limits.memory.max: "));
        ck_assert(startswith(errors[1], "policy.yaml:3: limits.tasks.max: "));
        ck_assert_str_eq(errors[2], "policy.yaml:4: bogus: unknown key");
        ck_assert(startswith(errors[3], "policy.yaml:5: uids.first: "));
}
END_TEST

START_TEST(test_validation) {
        _cleanup_strv_free_ char **errors = NULL;
        char * const paths[] = { (char *) "vendor.yaml", (char *) "admin.yaml", NULL };
        Policy *p = NULL;

        /* The default set by the file is blamed when it exceeds the maximum. */
        check_one("limits:\n  tasks:\n    default: 5000\n",
                  "policy.yaml:3: limits.tasks.default: 5000 is above limits.tasks.max (4096)");
        /* A maximum lowered below the built-in default is blamed on the maximum's line. */
        check_one("limits:\n  memory:\n    max: 256M\n",
                  "policy.yaml:3: limits.memory.max: 256.0M is below limits.memory.default (512.0M)");
        check_one("limits:\n  timeout: {default: 2h}\n",
                  "policy.yaml:2: limits.timeout.default: 2h is above limits.timeout.max (1h)");

        check_one("uids:\n  first: 1000\n  count: 100\n",
                  "policy.yaml:2: uids.first: the range 1000..1099 overlaps the uids of system and "
                  "regular users (below 65536); set uids.allow-low: yes if those uids are truly unused");
        ck_assert_ptr_null(check("uids:\n  first: 1000\n  count: 100\n  allow-low: yes\n"));
        check_one("uids:\n  first: 65500\n  count: 100\n  allow-low: yes\n",
                  "policy.yaml:2: uids.first: the range 65500..65599 contains 65534 (nobody) or 65535, "
                  "which runs must never use");
        check_one("uids:\n  first: 4294967000\n  count: 1000\n",
                  "policy.yaml:3: uids.count: the range 4294967000..4294967999 reaches past the largest "
                  "usable uid 4294967293");
        check_one("uids:\n  count: 8\n",
                  "policy.yaml:2: uids.count: 8 uids cannot serve concurrency.global (16) runs at once");
        check_one("environments:\n  builds:\n    per-user: 5\n",
                  "policy.yaml:3: environments.builds.per-user: 5 is above environments.builds.global (4)");
        check_one("concurrency:\n  per-user: 20\n",
                  "policy.yaml:2: concurrency.per-user: 20 is above concurrency.global (16)");
        check_one("queue:\n  global: 241\n",
                  "policy.yaml:2: queue.global: concurrency.global (16) and queue.global (241) together "
                  "allow more than 256 runs in flight, the most the service can follow on the bus");
        check_one("concurrency:\n  global: 300\n",
                  "policy.yaml:2: concurrency.global: concurrency.global (300) and queue.global (64) "
                  "together allow more than 256 runs in flight, the most the service can follow on the bus");
        check_one("queue:\n  per-user: 100\n",
                  "policy.yaml:2: queue.per-user: 100 is above queue.global (64)");

        /* Across layers: the admin's line is named, not the vendor's. */
        put("vendor.yaml", "limits:\n  memory: {default: 1G, max: 2G}\n");
        put("admin.yaml", "# lower the cap\n\nlimits:\n  memory:\n    max: 768M\n");
        ck_assert_int_eq(policy_load_files(paths, 0, &p, &errors), -EINVAL);
        ck_assert_ptr_null(p);
        ck_assert_uint_eq(strv_length(errors), 1);
        ck_assert_str_eq(errors[0],
                         "vendor.yaml:2: limits.memory.default: 1.0G is above limits.memory.max (768.0M)");
}
END_TEST

START_TEST(test_trusted_files) {
        char * const paths[] = { (char *) "policy.yaml", NULL };
        _cleanup_strv_free_ char **errors = NULL;
        Policy *p = NULL;

        put("policy.yaml", "limits: {tasks: {max: 5000}}\n");
        ck_assert_int_eq(chmod("policy.yaml", 0666), 0);
        ck_assert_int_eq(policy_load_files(paths, POLICY_LOAD_TRUSTED, &p, &errors), -EPERM);
        ck_assert_str_eq(errors[0],
                         "policy.yaml: refusing a policy not owned by root or writable by group or others");
        errors = strv_free(errors);

        ck_assert_int_eq(chmod("policy.yaml", 0644), 0);
        if (geteuid() == 0) {
                ck_assert_int_eq(policy_load_files(paths, POLICY_LOAD_TRUSTED, &p, &errors), 0);
                ck_assert_uint_eq(p->maximums.value[POLICY_LIMIT_TASKS], 5000);
                p = policy_free(p);
        } else
                ck_assert_int_eq(policy_load_files(paths, POLICY_LOAD_TRUSTED, &p, &errors), -EPERM);
}
END_TEST

START_TEST(test_load_message) {
        _cleanup_(policy_freep) Policy *p = NULL;
        _cleanup_free_ char *error = NULL;

        put("policy.yaml", "limits:\n  memory: {max: 12Q}\nfoo: 1\n");
        ck_assert_int_eq(policy_load("policy.yaml", &p, &error), -EINVAL);
        ck_assert_ptr_null(p);
        ck_assert_str_eq(error, "policy.yaml:2: limits.memory.max: not a size: '12Q' (like 512M or 4G) "
                         "(and 1 more problems)");
        error = mfree_str(error);

        put("policy.yaml", "limits:\n  memory: {max: 12G}\n");
        ck_assert_int_eq(policy_load("policy.yaml", &p, &error), 0);
        ck_assert_ptr_null(error);
        ck_assert_uint_eq(p->maximums.value[POLICY_LIMIT_MEMORY], 12ULL << 30);
}
END_TEST

START_TEST(test_resolve_limits) {
        _cleanup_(policy_freep) Policy *p = NULL;
        _cleanup_free_ char *error = NULL;
        PolicyLimits asked, out;
        bool raised = true;

        ck_assert_int_eq(policy_new_default(&p), 0);

        ck_assert_int_eq(policy_resolve_limits(p, NULL, &out, &raised, &error), 0);
        ck_assert(!raised);
        ck_assert(memcmp(&out, &p->defaults, sizeof(out)) == 0);

        for (PolicyLimit l = 0; l < _POLICY_LIMIT_MAX; l++)
                asked.value[l] = POLICY_LIMIT_UNSET;
        asked.value[POLICY_LIMIT_MEMORY] = 128ULL << 20;        /* lower: no raise */
        ck_assert_int_eq(policy_resolve_limits(p, &asked, &out, &raised, &error), 0);
        ck_assert(!raised);
        ck_assert_uint_eq(out.value[POLICY_LIMIT_MEMORY], 128ULL << 20);
        ck_assert_uint_eq(out.value[POLICY_LIMIT_TASKS], 256);

        asked.value[POLICY_LIMIT_TIMEOUT] = 600ULL * 1000000;  /* above default, within max */
        ck_assert_int_eq(policy_resolve_limits(p, &asked, &out, &raised, &error), 0);
        ck_assert(raised);
        ck_assert_uint_eq(out.value[POLICY_LIMIT_TIMEOUT], 600ULL * 1000000);

        out.value[POLICY_LIMIT_MEMORY] = 7;
        asked.value[POLICY_LIMIT_MEMORY] = 8ULL << 30;
        ck_assert_int_eq(policy_resolve_limits(p, &asked, &out, &raised, &error), -E2BIG);
        ck_assert_str_eq(error, "The memory limit 8.0G is above the maximum the policy allows (4.0G).");
        ck_assert_uint_eq(out.value[POLICY_LIMIT_MEMORY], 7);  /* untouched on failure */
        error = mfree_str(error);

        asked.value[POLICY_LIMIT_MEMORY] = POLICY_LIMIT_UNSET;
        asked.value[POLICY_LIMIT_TASKS] = 0;
        ck_assert_int_eq(policy_resolve_limits(p, &asked, &out, &raised, &error), -EINVAL);
        ck_assert_str_eq(error, "The tasks limit 0 is below the minimum of 1.");
}
END_TEST

START_TEST(test_network_allowed) {
        _cleanup_(policy_freep) Policy *p = load_one(
                "network:\n"
                "  allowed-skills:\n"
                "    - web-fetch\n"
                "    - sha256:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n");
        const char *h = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

        ck_assert(policy_network_allowed(p, "web-fetch", NULL, true));
        ck_assert(!policy_network_allowed(p, "web-fetch", NULL, false));       /* self-declared name */
        ck_assert(!policy_network_allowed(p, "other", "deadbeef", true));
        ck_assert(policy_network_allowed(p, "anything", h, false));
        ck_assert(policy_network_allowed(p, "anything",
                                         "sha256:00112233445566778899AABBCCDDEEFF"
                                         "00112233445566778899aabbccddeeff", false));
        ck_assert(!policy_network_allowed(p, NULL, "", false));
}
END_TEST

START_TEST(test_names) {
        for (PolicyLimit l = 0; l < _POLICY_LIMIT_MAX; l++)
                ck_assert_int_eq(policy_limit_from_string(policy_limit_to_string(l)), l);
        for (unsigned l = 1; l < _SANDBOX_LAYER_ALL; l <<= 1)
                ck_assert_int_eq(sandbox_layer_from_string(sandbox_layer_to_string(l)), (int) l);
        ck_assert_int_eq(sandbox_layer_from_string("pidns"), -EINVAL);
        ck_assert_int_eq(policy_limit_from_string("swap"), -EINVAL);
        ck_assert_int_eq(sandbox_layer_from_string(NULL), -EINVAL);
        ck_assert_ptr_null(policy_limit_to_string(_POLICY_LIMIT_MAX));
}
END_TEST

static Suite *policy_suite(void) {
        Suite *s = suite_create("policy");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_defaults_valid);
        tcase_add_test(tc, test_shipped_file_equals_defaults);
        tcase_add_test(tc, test_every_key);
        tcase_add_test(tc, test_empty_files);
        tcase_add_test(tc, test_layering);
        tcase_add_test(tc, test_value_errors);
        tcase_add_test(tc, test_structure_errors);
        tcase_add_test(tc, test_hostile_yaml);
        tcase_add_test(tc, test_syntax_errors);
        tcase_add_test(tc, test_file_errors);
        tcase_add_test(tc, test_all_problems_listed);
        tcase_add_test(tc, test_validation);
        tcase_add_test(tc, test_trusted_files);
        tcase_add_test(tc, test_load_message);
        tcase_add_test(tc, test_resolve_limits);
        tcase_add_test(tc, test_network_allowed);
        tcase_add_test(tc, test_names);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return test_run_suite(policy_suite());
}
