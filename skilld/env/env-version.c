/* Versions: PEP 440 versions and specifiers, as pip reads them (the rules of pypa's packaging
 * library: normalization, ordering, ==/!= with and without wildcards, ~=, <, <=, >, >=, ===,
 * pre-releases excluded unless a specifier names one), and Debian's version strings turned into
 * the upstream version they package. The Debian resolver takes a package only when the version it
 * would install satisfies what the skill asks for ("Debian has python3-pypdf 3.4.1, the skill
 * requires pypdf>=4"); anything else goes to the next resolver.
 *
 * Everything parsed here comes from a skill (specifiers) or from the archive (versions): bounded
 * sizes, numbers checked for overflow, and anything that does not parse is -EINVAL, never a guess
 * that lets a package through. */
#include <ctype.h>
#include <stdint.h>

#include "env.h"

#define RELEASE_MAX 32U
#define LOCAL_MAX 64U
#define VERSION_TEXT_MAX 256U

typedef enum PreKind {
        PRE_A,
        PRE_B,
        PRE_RC,
        _PRE_NONE,
} PreKind;

typedef struct Pep440 {
        uint64_t epoch;
        uint64_t release[RELEASE_MAX];
        size_t n_release;
        PreKind pre_kind;
        uint64_t pre;
        bool has_post;
        uint64_t post;
        bool has_dev;
        uint64_t dev;
        char local[LOCAL_MAX];          /* normalized: lower case, segments joined by '.'; "" none */
} Pep440;

static bool parse_number(const char **p, uint64_t *ret) {
        uint64_t v = 0;

        if (!isdigit((unsigned char) **p))
                return false;
        for (; isdigit((unsigned char) **p); (*p)++) {
                unsigned d = (unsigned) (**p - '0');

                if (v > (UINT64_MAX - d) / 10)
                        return false;
                v = v * 10 + d;
        }
        *ret = v;
        return true;
}

static bool is_sep(char c) {
        return c == '-' || c == '_' || c == '.';
}

/* Matches one of words (longest listed first) at *p, case-insensitively, after an optional
 * separator; returns its index, or -1 with *p unchanged. */
static int match_word(const char **p, const char *const *words, size_t n) {
        const char *q = *p;

        if (is_sep(*q))
                q++;
        for (size_t i = 0; i < n; i++) {
                size_t l = strlen(words[i]);

                if (strncasecmp(q, words[i], l) == 0) {
                        *p = q + l;
                        return (int) i;
                }
        }
        return -1;
}

/* The optional number after a pre, post or dev label, with an optional separator; 0 if none. */
static uint64_t label_number(const char **p, bool *ok) {
        const char *q = *p;
        uint64_t v = 0;

        if (is_sep(*q) && isdigit((unsigned char) q[1]))
                q++;
        if (isdigit((unsigned char) *q)) {
                if (!parse_number(&q, &v)) {
                        *ok = false;
                        return 0;
                }
                *p = q;
        }
        return v;
}

static int pep440_parse(const char *s, Pep440 *ret) {
        static const char *const pre_words[] = { "preview", "alpha", "beta", "pre", "rc", "a", "b", "c" };
        static const PreKind pre_kinds[] = { PRE_RC, PRE_A, PRE_B, PRE_RC, PRE_RC, PRE_A, PRE_B, PRE_RC };
        static const char *const post_words[] = { "post", "rev", "r" };
        static const char *const dev_words[] = { "dev" };
        Pep440 v = { .pre_kind = _PRE_NONE };
        const char *p = s, *save;
        bool ok = true;
        int k;

        if (!s || strlen(s) > VERSION_TEXT_MAX)
                return -EINVAL;
        while (isspace((unsigned char) *p))
                p++;
        if (*p == 'v' || *p == 'V')
                p++;

        /* Epoch and release. */
        if (!parse_number(&p, &v.release[0]))
                return -EINVAL;
        if (*p == '!') {
                v.epoch = v.release[0];
                p++;
                if (!parse_number(&p, &v.release[0]))
                        return -EINVAL;
        }
        v.n_release = 1;
        while (*p == '.' && isdigit((unsigned char) p[1])) {
                if (v.n_release >= RELEASE_MAX)
                        return -EINVAL;
                p++;
                if (!parse_number(&p, &v.release[v.n_release++]))
                        return -EINVAL;
        }

        /* Pre-release: "a1", "-beta.2", "rc", "c3", "preview". "post" and "pre" share no prefix
         * with "p" alone, so the longest words are tried first. */
        save = p;
        k = match_word(&p, pre_words, ELEMENTSOF(pre_words));
        if (k >= 0) {
                v.pre_kind = pre_kinds[k];
                v.pre = label_number(&p, &ok);
        } else
                p = save;

        /* Post-release: "-1" (implicit), or ".post1", "rev", "r". */
        if (*p == '-' && isdigit((unsigned char) p[1])) {
                p++;
                v.has_post = parse_number(&p, &v.post);
                ok = ok && v.has_post;
        } else {
                save = p;
                k = match_word(&p, post_words, ELEMENTSOF(post_words));
                if (k >= 0) {
                        v.has_post = true;
                        v.post = label_number(&p, &ok);
                } else
                        p = save;
        }

        save = p;
        k = match_word(&p, dev_words, ELEMENTSOF(dev_words));
        if (k >= 0) {
                v.has_dev = true;
                v.dev = label_number(&p, &ok);
        } else
                p = save;

        if (*p == '+') {
                size_t n = 0;

                p++;
                if (!isalnum((unsigned char) *p))
                        return -EINVAL;
                for (; isalnum((unsigned char) *p) || is_sep(*p); p++) {
                        if (is_sep(*p) && (!isalnum((unsigned char) p[1])))
                                return -EINVAL;
                        if (n + 1 >= sizeof(v.local))
                                return -EINVAL;
                        v.local[n++] = is_sep(*p) ? '.' : (char) tolower((unsigned char) *p);
                }
                v.local[n] = '\0';
        }
        while (isspace((unsigned char) *p))
                p++;
        if (!ok || *p != '\0')
                return -EINVAL;
        *ret = v;
        return 0;
}

static bool is_prerelease(const Pep440 *v) {
        return v->pre_kind != _PRE_NONE || v->has_dev;
}

static int cmp_u64(uint64_t a, uint64_t b) {
        return a < b ? -1 : a > b ? 1 : 0;
}

/* Local segments: numbers compare as numbers and sort after words; words compare as strings;
 * more segments win when all shared ones are equal. */
static int cmp_local(const char *a, const char *b) {
        if (isempty(a) || isempty(b))
                return isempty(a) && isempty(b) ? 0 : isempty(a) ? -1 : 1;
        while (*a || *b) {
                size_t la = strcspn(a, "."), lb = strcspn(b, ".");
                bool na = la > 0 && strspn(a, "0123456789") == la, nb = lb > 0 && strspn(b, "0123456789") == lb;
                int c;

                if (la == 0 || lb == 0)
                        return la == 0 && lb == 0 ? 0 : la == 0 ? -1 : 1;
                if (na && nb) {
                        /* Leading zeros do not count; then the longer number is the larger. */
                        while (la > 1 && *a == '0')
                                a++, la--;
                        while (lb > 1 && *b == '0')
                                b++, lb--;
                        c = la != lb ? (la < lb ? -1 : 1) : strncmp(a, b, la);
                } else if (na != nb)
                        c = na ? 1 : -1;
                else {
                        c = strncmp(a, b, MIN(la, lb));
                        if (c == 0)
                                c = la < lb ? -1 : la > lb ? 1 : 0;
                }
                if (c != 0)
                        return c < 0 ? -1 : 1;
                a += la;
                b += lb;
                if (*a == '.')
                        a++;
                if (*b == '.')
                        b++;
        }
        return 0;
}

/* packaging's ordering: epoch, release (trailing zeros ignored), then pre-release (a dev release
 * of no pre or post release sorts before every pre-release; no pre-release sorts after all), post
 * (none first), dev (none last), local (none first). with_local false compares public versions. */
static int pep440_cmp(const Pep440 *a, const Pep440 *b, bool with_local) {
        int c;

        c = cmp_u64(a->epoch, b->epoch);
        if (c != 0)
                return c;
        for (size_t i = 0; i < MAX(a->n_release, b->n_release); i++) {
                c = cmp_u64(i < a->n_release ? a->release[i] : 0, i < b->n_release ? b->release[i] : 0);
                if (c != 0)
                        return c;
        }

        /* The pre-release key: -1 (dev only), (kind, n), or +inf. */
        {
                int ka = a->pre_kind != _PRE_NONE ? 1 : (!a->has_post && a->has_dev) ? 0 : 2,
                    kb = b->pre_kind != _PRE_NONE ? 1 : (!b->has_post && b->has_dev) ? 0 : 2;

                if (ka != kb)
                        return ka < kb ? -1 : 1;
                if (ka == 1) {
                        if (a->pre_kind != b->pre_kind)
                                return a->pre_kind < b->pre_kind ? -1 : 1;
                        c = cmp_u64(a->pre, b->pre);
                        if (c != 0)
                                return c;
                }
        }
        if (a->has_post != b->has_post)
                return a->has_post ? 1 : -1;
        c = cmp_u64(a->post, b->post);
        if (c != 0)
                return c;
        if (a->has_dev != b->has_dev)
                return a->has_dev ? -1 : 1;
        c = cmp_u64(a->dev, b->dev);
        if (c != 0 || !with_local)
                return c;
        return cmp_local(a->local, b->local);
}

int env_pep440_compare(const char *a, const char *b, int *ret) {
        Pep440 va, vb;

        if (pep440_parse(a, &va) < 0 || pep440_parse(b, &vb) < 0)
                return -EINVAL;
        *ret = pep440_cmp(&va, &vb, true);
        return 0;
}

bool env_pep440_is_valid(const char *version) {
        Pep440 v;

        return pep440_parse(version, &v) >= 0;
}

/* "==1.2.*" against v: the release of v, padded with zeros, starts with that of the prefix (and
 * the epochs agree). A prefix with a pre, post or dev part must match it exactly too. */
static bool prefix_match(const Pep440 *v, const Pep440 *prefix) {
        if (v->epoch != prefix->epoch)
                return false;
        for (size_t i = 0; i < prefix->n_release; i++)
                if ((i < v->n_release ? v->release[i] : 0) != prefix->release[i])
                        return false;
        if (prefix->pre_kind != _PRE_NONE &&
            (v->n_release != prefix->n_release || v->pre_kind != prefix->pre_kind || v->pre != prefix->pre))
                return false;
        if (prefix->has_post && (!v->has_post || v->post != prefix->post))
                return false;
        if (prefix->has_dev && (!v->has_dev || v->dev != prefix->dev))
                return false;
        return true;
}

static bool same_base(const Pep440 *a, const Pep440 *b) {
        Pep440 x = { .epoch = a->epoch, .n_release = a->n_release, .pre_kind = _PRE_NONE },
               y = { .epoch = b->epoch, .n_release = b->n_release, .pre_kind = _PRE_NONE };

        memcpy(x.release, a->release, sizeof(x.release));
        memcpy(y.release, b->release, sizeof(y.release));
        return pep440_cmp(&x, &y, false) == 0;
}

typedef enum Op {
        OP_ARBITRARY,   /* === */
        OP_COMPATIBLE,  /* ~= */
        OP_EQ,
        OP_NE,
        OP_LE,
        OP_GE,
        OP_LT,
        OP_GT,
} Op;

/* One specifier clause ("~=1.4.2", "==1.2.*", "<2") against the version text and its parse.
 * *ret_pre is set when the clause names a pre-release in a way that lets pre-releases in. */
static int clause_matches(const char *text, const Pep440 *v, const char *clause, bool *ret_pre) {
        static const struct {
                const char *s;
                Op op;
        } ops[] = {
                { "===", OP_ARBITRARY }, { "~=", OP_COMPATIBLE }, { "==", OP_EQ }, { "!=", OP_NE },
                { "<=", OP_LE },         { ">=", OP_GE },         { "<", OP_LT },  { ">", OP_GT },
        };
        char buf[VERSION_TEXT_MAX + 1];
        const char *p = clause;
        bool wildcard = false;
        Pep440 s;
        Op op = OP_EQ;
        size_t i, l;
        int c;

        while (isspace((unsigned char) *p))
                p++;
        for (i = 0; i < ELEMENTSOF(ops); i++)
                if (startswith(p, ops[i].s)) {
                        op = ops[i].op;
                        p += strlen(ops[i].s);
                        break;
                }
        if (i == ELEMENTSOF(ops))
                return -EINVAL;
        while (isspace((unsigned char) *p))
                p++;
        l = strlen(p);
        while (l > 0 && isspace((unsigned char) p[l - 1]))
                l--;
        if (l == 0 || l > VERSION_TEXT_MAX)
                return -EINVAL;
        memcpy(buf, p, l);
        buf[l] = '\0';

        if (op == OP_ARBITRARY)
                return strcasecmp(buf, text) == 0;
        if (l > 2 && endswith(buf, ".*")) {
                if (op != OP_EQ && op != OP_NE)
                        return -EINVAL;
                wildcard = true;
                buf[l - 2] = '\0';
        }
        if (pep440_parse(buf, &s) < 0)
                return -EINVAL;
        if (wildcard && !isempty(s.local))
                return -EINVAL;
        if (op != OP_EQ && op != OP_NE && !isempty(s.local))
                return -EINVAL; /* only == and != may name a local version */
        if (op == OP_COMPATIBLE && s.n_release < 2)
                return -EINVAL;
        if ((op == OP_EQ || op == OP_GE || op == OP_LE || op == OP_COMPATIBLE) && is_prerelease(&s))
                *ret_pre = true;

        switch (op) {
        case OP_EQ:
        case OP_NE: {
                bool eq;

                if (wildcard)
                        eq = prefix_match(v, &s);
                else if (isempty(s.local))
                        eq = pep440_cmp(v, &s, false) == 0;
                else
                        eq = pep440_cmp(v, &s, true) == 0;
                return op == OP_EQ ? eq : !eq;
        }
        case OP_COMPATIBLE: {
                /* ~=V.N is >=V.N together with ==V.* */
                Pep440 prefix = { .epoch = s.epoch, .n_release = s.n_release - 1, .pre_kind = _PRE_NONE };

                memcpy(prefix.release, s.release, sizeof(prefix.release));
                return pep440_cmp(v, &s, false) >= 0 && prefix_match(v, &prefix);
        }
        case OP_LE:
                return pep440_cmp(v, &s, false) <= 0;
        case OP_GE:
                return pep440_cmp(v, &s, false) >= 0;
        case OP_LT:
                c = pep440_cmp(v, &s, false);
                /* <3 does not take 3.0a1, unless it is <3.0rc1 itself. */
                if (c < 0 && !is_prerelease(&s) && is_prerelease(v) && same_base(v, &s))
                        return false;
                return c < 0;
        case OP_GT:
                c = pep440_cmp(v, &s, false);
                /* >3 does not take 3.post1 unless it names a post-release, nor 3+local. */
                if (c > 0 && !s.has_post && v->has_post && same_base(v, &s))
                        return false;
                if (c > 0 && !isempty(v->local) && same_base(v, &s))
                        return false;
                return c > 0;
        case OP_ARBITRARY:
                break;
        }
        return -EINVAL;
}

int env_pep440_satisfies(const char *version, const char *specifiers) {
        _cleanup_free_ char *copy = NULL;
        bool pre_ok = false, all = true;
        char *save = NULL;
        Pep440 v;
        int r;

        if (pep440_parse(version, &v) < 0)
                return -EINVAL;
        if (isempty(specifiers) || strspn(specifiers, " \t") == strlen(specifiers))
                return 1;
        copy = strdup(specifiers);
        if (!copy)
                return -ENOMEM;
        for (char *c = strtok_r(copy, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
                r = clause_matches(version, &v, c, &pre_ok);
                if (r < 0)
                        return r;
                if (r == 0)
                        all = false;
        }
        /* Like pip: a pre-release satisfies only specifiers that name one. */
        if (all && is_prerelease(&v) && !pre_ok)
                return 0;
        return all;
}

/* Debian's "[epoch:]upstream[-revision]" to the upstream version in PEP 440 terms:
 *   1:1.24.2-1+deb12u1      1.24.2          (epoch and revision are Debian's)
 *   1.26.4+ds-6             1.26.4          (+dfsg, +ds, +repack, +git...: repackaging)
 *   2.0+really1.9-1         1.9             (Debian's way of going back to an older release)
 *   3.0~rc1-1               3.0rc1          (~ sorts before the release: a pre-release)
 *   3.0~git20240101-1       3.0.dev0        (a snapshot before the release)
 *   0.9.1.dfsg-2            0.9.1
 * What is left must parse as a PEP 440 version, else -EINVAL. */
int env_debian_upstream_version(const char *debian, char **ret) {
        static const char *const repack_suffixes[] = { ".dfsg", ".ds", ".repack" };
        _cleanup_free_ char *s = NULL;
        const char *colon, *really;
        char *p;

        if (!debian || strlen(debian) > VERSION_TEXT_MAX)
                return -EINVAL;
        colon = strchr(debian, ':');
        if (colon && colon > debian && strspn(debian, "0123456789") == (size_t) (colon - debian))
                debian = colon + 1;
        s = strdup(debian);
        if (!s)
                return -ENOMEM;
        p = strrchr(s, '-');
        if (p)
                *p = '\0';
        really = strstr(s, "+really");
        if (really)
                memmove(s, really + strlen("+really"), strlen(really + strlen("+really")) + 1);
        s[strcspn(s, "+")] = '\0';
        /* ".dfsg", ".ds", ".repack" at the end of the upstream part. */
        for (size_t i = 0; i < ELEMENTSOF(repack_suffixes); i++) {
                size_t n = strlen(repack_suffixes[i]);

                p = strstr(s, repack_suffixes[i]);
                if (p && (p[n] == '\0' || p[n] == '.' || isdigit((unsigned char) p[n])))
                        *p = '\0';
        }

        p = strchr(s, '~');
        if (p) {
                _cleanup_free_ char *joined = NULL;
                Pep440 probe;

                /* "~rc1", "~b2", "~dev3": a PEP 440 pre or dev part as it is; anything else a
                 * snapshot before the release. */
                *p = '\0';
                joined = isalpha((unsigned char) p[1]) ? strdup_printf("%s%s", s, p + 1) : strdup_printf("%s.dev0", s);
                if (!joined)
                        return -ENOMEM;
                if (isalpha((unsigned char) p[1]) && (pep440_parse(joined, &probe) < 0 || !is_prerelease(&probe))) {
                        free(joined);
                        joined = strdup_printf("%s.dev0", s);
                        if (!joined)
                                return -ENOMEM;
                }
                free(s);
                s = TAKE_PTR(joined);
        }
        if (!env_pep440_is_valid(s))
                return -EINVAL;
        *ret = TAKE_PTR(s);
        return 0;
}
