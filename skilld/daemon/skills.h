/* Installed skills: skills that run by name (RunInstalled). Three directories hold them, one
 * folder per skill named after it, looked at in this order (the first one holding a name wins):
 *
 *   admin      SYSCONFDIR/skilld/skills      the administrator's, by hand
 *   installed  STATE/skills                  through InstallSkill (io.skilld.manage-skills)
 *   vendor     PKGDATADIR/skills             shipped by packages
 *
 * Only "installed" is ours to change. An install is unpacked and validated in a staging folder
 * next to its final place (".#install-<random>"), then renamed into place in one step; a
 * replaced or removed skill is renamed to ".#trash-<random>" and deleted only once no run is
 * active, since a run may still execute the old tree (runs keep their skill open by fd).
 * Nothing here knows about D-Bus. */
#pragma once

#include "util.h"

typedef enum SkillOrigin {
        SKILL_ORIGIN_ADMIN,
        SKILL_ORIGIN_INSTALLED,
        SKILL_ORIGIN_VENDOR,
        _SKILL_ORIGIN_MAX,
        _SKILL_ORIGIN_INVALID = -EINVAL,
} SkillOrigin;

/* "admin", "installed", "vendor": the names ListSkills reports. */
const char *skill_origin_to_string(SkillOrigin o) _pure_;

typedef struct SkillDirs {
        char *path[_SKILL_ORIGIN_MAX];
} SkillDirs;

#define SKILLS_VENDOR_DIR PKGDATADIR "/skills"
#define SKILLS_ADMIN_DIR SYSCONFDIR "/skilld/skills"

/* installed_dir is created (0755) when missing; the others are only read. */
int skill_dirs_init(SkillDirs *d, const char *admin_dir, const char *installed_dir, const char *vendor_dir);
void skill_dirs_done(SkillDirs *d);

/* Opens the folder of the installed skill name (a valid skill name): the first origin holding
 * it. -ENOPKG when none does. */
int skills_open(const SkillDirs *d, const char *name, int *ret_fd, SkillOrigin *ret_origin);

typedef struct SkillInfo {
        char *name;
        char *description;
        char *hash;                     /* "" when the skill does not validate */
        SkillOrigin origin;
} SkillInfo;

void skill_infos_free(SkillInfo *l, size_t n);
/* Every installed skill, each name once (the one that wins), sorted by name. A folder that does
 * not validate is listed with an empty hash and the problem as its description. */
int skills_list(const SkillDirs *d, SkillInfo **ret, size_t *ret_n);

/* Creates an empty staging folder for an install; returns its name (in the installed directory)
 * and an fd of it. */
int skills_new_staging(const SkillDirs *d, char **ret_name, int *ret_fd);
/* Deletes a staging folder that will not be installed. */
void skills_drop_staging(const SkillDirs *d, const char *staging);
/* Moves the validated staging folder into place as name. -EEXIST when the name is taken and
 * replace is false, or when the admin directory holds it (nothing can replace that). */
int skills_install(const SkillDirs *d, const char *staging, const char *name, bool replace, char **error);
/* Removes an installed skill; -ENOPKG if there is none, -EROFS for one of the admin or vendor
 * directory (files of the host, not ours). */
int skills_remove(const SkillDirs *d, const char *name, char **error);
/* Deletes the trash of earlier replaces and removes (and, with staging, leftover staging folders
 * of a service that was stopped). Only while no run is active. */
void skills_purge(const SkillDirs *d, bool staging);
