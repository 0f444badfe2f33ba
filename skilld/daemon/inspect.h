/* Inspecting a skill a caller hands the service: unpack it (a .skill archive) into a directory of
 * the service, validate it, resolve its entry point and hash it, so that the call can be
 * authorized with the skill's real name, hash and script as polkit details.
 *
 * A hostile archive may be large, and unpacking and hashing it takes time, so the service never
 * does this on its event loop: inspect_spawn() forks a child that does the work and writes an
 * Inspection, as JSON, into a memfd the service reads once the child is gone. The child unpacks
 * only into the directory it is given, which the service created and owns. */
#pragma once

#include <sys/types.h>

#include "skill-limits.h"
#include "util.h"

/* The largest archive accepted from a caller. */
#define INSPECT_ARCHIVE_MAX (256ULL * 1024 * 1024)

typedef enum InspectFlags {
        INSPECT_ENTRY   = 1 << 0,       /* resolve the entry point (runs); installing needs none */
        INSPECT_LINT    = 1 << 1,       /* every lint error is fatal (installs); else only the name */
} InspectFlags;

typedef struct Inspection {
        char *name;
        char *description;
        char *hash;                     /* hex SHA-256 of the tree (skill_tree_hash) */
        char *script;                   /* entry point, relative to the skill root */
        char *interpreter;              /* absolute path, or NULL to execute the script itself */
        SkillDeclaredLimits limits;     /* what the frontmatter declares (timeout, resources) */
        int error_errno;                /* positive; 0 when the skill is fine */
        char *error;                    /* what is wrong with it, for the caller */
} Inspection;

void inspection_done(Inspection *i);

/* The tree at dir_fd, already validated or unpacked by us. dir_name: the folder name the skill's
 * name must equal (NULL: no such rule). script: the caller's choice, or NULL for the default.
 * A skill that fails is not an error of the function: the Inspection says why. */
int inspect_tree(int dir_fd, const char *dir_name, const char *script, InspectFlags flags, Inspection *ret);
/* Unpacks the archive (a .skill zip) into the empty directory target_fd, then inspects it. The
 * archive is read from a private copy (an unnamed file in target_fd's file system) unless it is a
 * memfd sealed against writes, shrinking and growing: the caller cannot change it under the
 * loader. */
int inspect_archive(int archive_fd, int target_fd, const char *script, InspectFlags flags, Inspection *ret);
/* A directory of the host (an installed skill): checked with the loader's rules, then inspected. */
int inspect_directory(int dir_fd, const char *dir_name, const char *script, InspectFlags flags,
                      Inspection *ret);

int inspection_to_json(const Inspection *i, char **ret);
int inspection_from_json(const char *text, Inspection *ret);

/* Forks the inspecting child: with archive_fd >= 0 the archive is unpacked into target_fd, else
 * target_fd is an installed skill's directory. Returns its pid and the memfd it writes the
 * Inspection to; the caller reaps the child and reads the memfd (inspection_read()). */
int inspect_spawn(int archive_fd, int target_fd, const char *dir_name, const char *script,
                  InspectFlags flags, pid_t *ret_pid, int *ret_result_fd);
/* Reads what the child wrote: -EIO when that is nothing or not an inspection (the child died). */
int inspection_read(int result_fd, Inspection *ret);
