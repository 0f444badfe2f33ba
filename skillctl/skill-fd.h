/* A skill as the service takes it: a file descriptor, never a path, since a root service that
 * opens paths its callers name is a confused deputy. A .skill file is opened here, as the caller;
 * a directory is packed into a sealed memfd, which the service can read but nobody can change
 * under it. Both are validated here first with the loader, so a bad skill fails with the same
 * message through the service as embedded. */
#pragma once

#include "loader.h"
#include "skill.h"

typedef struct LocalSkill {
        SkillSource *source;            /* the validated tree */
        Skill *skill;                   /* its SKILL.md */
        int archive_fd;                 /* the .skill file, when the skill is one; else -EBADF */
} LocalSkill;

#define LOCAL_SKILL_NULL { .archive_fd = -EBADF }

void local_skill_done(LocalSkill *s);

/* Opens and validates the skill at path (a folder or a .skill file) and parses its SKILL.md.
 * Fails with a message "PATH: why" in *error. */
int local_skill_open(const char *path, LocalSkill *ret, char **error);

/* An fd for the service holding the skill as a .skill zip, at offset 0: the archive's, or a memfd
 * (MFD_CLOEXEC | MFD_ALLOW_SEALING) the tree is packed into, sealed against writes, growing and
 * shrinking. */
int local_skill_to_fd(const LocalSkill *s, int *ret_fd, char **error);
