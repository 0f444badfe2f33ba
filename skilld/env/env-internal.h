/* What the files of skilld/env share and no caller needs. */
#pragma once

#include "env.h"

/* Where a resolved package came from. */
typedef enum EnvSource {
        ENV_SOURCE_NONE,        /* no source provided it */
        ENV_SOURCE_HOST,        /* the host has it installed; runs see it under /usr */
        ENV_SOURCE_DEBIAN,
        ENV_SOURCE_PIP,
        ENV_SOURCE_NPM,
} EnvSource;

typedef struct EnvDebianItem {
        DepEcosystem ecosystem;         /* python or system */
        char *name;                     /* the distribution or package asked for */
        char *package;                  /* the Debian package that provides it */
        char *version;
        char *reason;                   /* source NONE: why Debian's package does not do, or NULL
                                         * when Debian has no package of that name */
        EnvSource source;
} EnvDebianItem;

typedef struct EnvDebianPlan {
        EnvDebianItem *items;
        size_t n_items;
        char **download;                /* "name=version" of the closure the host lacks */
} EnvDebianPlan;

void env_debian_plan_done(EnvDebianPlan *p);
/* Which Debian package provides each name, and what to download. python_specs (NULL, or one per
 * name, "" for none) are the PEP 440 specifiers the version Debian has must satisfy. */
int env_debian_plan(char **python_names, char **python_specs, char **system, int log_fd, EnvDebianPlan *ret,
                    char **error);
/* apt-get download into dir, as uid when not (uid_t) -1. */
int env_debian_download(char **packages, const char *dir, int log_fd, uid_t uid, char **error);

int env_run_capture(char * const *argv, const char *cwd, int log_fd, uid_t uid, char **ret_out);

/* Makes every directory below and including path writable again, so it can be removed. */
int env_tree_make_writable(int dir_fd, const char *path);
/* Makes the tree read-only and fsyncs every file and directory in it. */
int env_tree_seal(int dir_fd);
/* rm -rf of a tree that may be read-only. */
int env_tree_remove(int dir_fd, const char *path);
/* The names in a directory, sorted, without "." and "..". */
int env_dir_names(int fd, char ***ret);
/* Records spec's id as the one built for its needs. */
int env_needs_set(const char *cache_dir, const EnvSpec *spec);
