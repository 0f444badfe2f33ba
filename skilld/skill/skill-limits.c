/* See skill-limits.h. The units follow the formats these keys come from: durations as skilld reads them
 * ("5s", "2min", a bare number of seconds); memory as Kubernetes quantities, which Skillbox's
 * resources are ("64Mi", and "512M" or a plain number of bytes as skilld reads them); CPU as
 * Kubernetes cores ("0.25", "1", "500m" millicores) or a percentage of one CPU ("25%"). */
#include <ctype.h>
#include <math.h>

#include "error.h"
#include "json-exact.h"
#include "skill-limits.h"
#include "parse-util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

static int parse_memory(const char *v, uint64_t *ret) {
        _cleanup_free_ char *binary = NULL;
        size_t n = strlen(v);

        /* Kubernetes' binary suffixes Ki, Mi, Gi, Ti are parse_size()'s KiB, MiB, ... */
        if (n >= 2 && v[n - 1] == 'i' && strchr("KMGT", v[n - 2])) {
                binary = strdup_printf("%sB", v);
                if (!binary)
                        return -ENOMEM;
                v = binary;
        }
        return parse_size(v, ret);
}

static int parse_cpu(const char *v, unsigned *ret) {
        size_t n = strlen(v);
        double cores;
        char *end;

        if (n > 0 && v[n - 1] == '%')
                return parse_percent_unbounded(v, ret);
        if (n > 1 && v[n - 1] == 'm') {
                _cleanup_free_ char *digits = strndup(v, n - 1);
                unsigned milli;
                int r;

                if (!digits)
                        return -ENOMEM;
                r = safe_atou(digits, &milli);
                if (r < 0)
                        return r;
                if (milli < 10 || milli > 1000000)
                        return -ERANGE;
                *ret = milli / 10;
                return 0;
        }
        if (n == 0 || !isdigit((unsigned char) v[0]))
                return -EINVAL;
        errno = 0;
        cores = strtod(v, &end);
        if (errno != 0 || *end != '\0' || !isfinite(cores))
                return -EINVAL;
        if (cores < 0.01 || cores > 1000)
                return -ERANGE;
        *ret = (unsigned) (cores * 100 + 0.5);
        return 0;
}

int skill_resource_check(const char *key, const char *value, char **error) {
        uint64_t size;
        unsigned pct;

        if (streq(key, "memory")) {
                if (!value || parse_memory(value, &size) < 0)
                        return error_setf(error, -EINVAL, "'%s' is not a size (64Mi, 512M, 1G)", strempty(value));
                if (size < 4ULL * 1024 * 1024)
                        return error_setf(error, -EINVAL, "'%s' is below the minimum of 4M", value);
                return 0;
        }
        if (streq(key, "cpu")) {
                if (!value || parse_cpu(value, &pct) < 0)
                        return error_setf(error, -EINVAL, "'%s' is not a CPU amount (0.5, 2, 500m, 50%%)",
                                          strempty(value));
                if (pct < 1 || pct > 100000)
                        return error_setf(error, -EINVAL, "'%s' is outside 1%%..100000%% of one CPU", value);
                return 0;
        }
        return -ENOENT;
}

int skill_declared_limits(const Skill *s, SkillDeclaredLimits *ret, char **error) {
        SkillDeclaredLimits d = {};
        const SkillField *f;
        int r;

        f = skill_get_field(s, "timeout");
        if (f) {
                if (!s->timeout || parse_sec(s->timeout, &d.timeout_usec) < 0)
                        return error_setf(error, -EINVAL, "timeout: '%s' is not a duration (5s, 2min, 30)",
                                          strempty(s->timeout));
                if (d.timeout_usec < 100000ULL || d.timeout_usec > 7ULL * 24 * 3600 * 1000000)
                        return error_setf(error, -EINVAL, "timeout: '%s' is outside 100ms..7d", s->timeout);
                d.set |= SANDBOX_LIMIT_TIMEOUT;
        }

        f = skill_get_field(s, "resources");
        if (f && f->kind != SKILL_VALUE_MAPPING && f->kind != SKILL_VALUE_NULL)
                return error_setf(error, -EINVAL, "resources: must be a mapping (memory, cpu), found a %s",
                                  skill_value_kind_to_string(f->kind));
        for (size_t i = 0; i < s->n_resources_fields; i++) {
                const SkillField *e = &s->resources_fields[i];
                _cleanup_free_ char *why = NULL;

                r = skill_resource_check(e->key, e->is_scalar ? e->value : NULL, &why);
                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return error_setf(error, r, "resources.%s: %s", e->key, why);
                if (streq(e->key, "memory")) {
                        (void) parse_memory(e->value, &d.memory_max);
                        d.set |= SANDBOX_LIMIT_MEMORY;
                } else {
                        (void) parse_cpu(e->value, &d.cpu_percent);
                        d.set |= SANDBOX_LIMIT_CPU;
                }
        }

        *ret = d;
        return 0;
}

unsigned skill_declared_limits_apply(const SkillDeclaredLimits *d, SandboxLimits *l) {
        unsigned changed = 0;

        if ((d->set & SANDBOX_LIMIT_TIMEOUT) && d->timeout_usec < l->timeout_usec) {
                l->timeout_usec = d->timeout_usec;
                changed |= SANDBOX_LIMIT_TIMEOUT;
        }
        if ((d->set & SANDBOX_LIMIT_MEMORY) && d->memory_max < l->memory_max) {
                l->memory_max = d->memory_max;
                changed |= SANDBOX_LIMIT_MEMORY;
        }
        if ((d->set & SANDBOX_LIMIT_CPU) && d->cpu_percent < l->cpu_percent) {
                l->cpu_percent = d->cpu_percent;
                changed |= SANDBOX_LIMIT_CPU;
        }
        return changed;
}

int skill_declared_limits_to_json(const SkillDeclaredLimits *d, cJSON **ret) {
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;

        if (d->set == 0) {
                *ret = NULL;
                return 0;
        }
        j = cJSON_CreateObject();
        if (!j)
                return -ENOMEM;
        if (((d->set & SANDBOX_LIMIT_TIMEOUT) &&
             !json_add_uint64(j, "timeout_usec", d->timeout_usec)) ||
            ((d->set & SANDBOX_LIMIT_MEMORY) && !json_add_uint64(j, "memory_max", d->memory_max)) ||
            ((d->set & SANDBOX_LIMIT_CPU) && !cJSON_AddNumberToObject(j, "cpu_percent", d->cpu_percent)))
                return -ENOMEM;
        *ret = TAKE_PTR(j);
        return 0;
}
