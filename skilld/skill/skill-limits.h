/* Limits a skill declares for itself in its frontmatter, in the vocabulary of other skill formats
 * (Skillbox writes "timeout: 5s" and "resources: {memory: 64Mi, cpu: '0.25'}"). They are
 * requests, never grants: a run gets the smaller of what the skill declares and what it would
 * get otherwise (the caller's flags, else the defaults of skillctl or of the service's policy),
 * so a skill can shorten its own leash but never lengthen it. */
#pragma once

#include "engine.h"
#include "skill.h"

typedef struct SkillDeclaredLimits {
        uint64_t timeout_usec;          /* 0: not declared */
        uint64_t memory_max;            /* bytes; 0: not declared */
        unsigned cpu_percent;           /* of one CPU; 0: not declared */
        unsigned set;                   /* SandboxLimit bits of what is declared */
} SkillDeclaredLimits;

/* Reads "timeout" and "resources" (memory, cpu). A value that cannot be read fails with -EINVAL
 * and a message naming the key; keys of resources other than memory and cpu are ignored (lint
 * warns about them). */
int skill_declared_limits(const Skill *s, SkillDeclaredLimits *ret, char **error);

/* Lowers each limit of l the skill declares a smaller value for; returns the SandboxLimit bits
 * that changed. */
unsigned skill_declared_limits_apply(const SkillDeclaredLimits *d, SandboxLimits *l);

/* The declared limits as JSON {"timeout_usec":..., "memory_max":..., "cpu_percent":...}, only the
 * declared ones; NULL (not an error) when nothing is declared. */
int skill_declared_limits_to_json(const SkillDeclaredLimits *d, cJSON **ret);

/* One resources entry checked alone, for lint: -EINVAL with a message for a bad value, -ENOENT
 * for a key skilld does not know. */
int skill_resource_check(const char *key, const char *value, char **error);
