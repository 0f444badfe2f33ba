/* libseccomp, loaded when a seccomp program must be generated (seccomp.c) or a refused call named
 * by its number (seccomp-notify.c). A run whose programs come from the cache (seccomp-cache.c),
 * nearly every run, never maps it: linked, it cost every start of skillctl its loading and
 * relocation and every exit its unmapping (0.04 ms of each embedded run, bench/README.md, tenth
 * round). The headers still give the types and constants; the functions are reached through the
 * sym_* pointers below, all resolved together by dlopen_libseccomp(), or none. */
#pragma once

#include <seccomp.h>

#define SECCOMP_DLSYM(name) extern typeof(name) *sym_##name

SECCOMP_DLSYM(seccomp_attr_set);
SECCOMP_DLSYM(seccomp_export_bpf);
SECCOMP_DLSYM(seccomp_init);
SECCOMP_DLSYM(seccomp_release);
SECCOMP_DLSYM(seccomp_rule_add_array);
SECCOMP_DLSYM(seccomp_syscall_resolve_name);
SECCOMP_DLSYM(seccomp_syscall_resolve_num_arch);

#undef SECCOMP_DLSYM

static inline void sym_seccomp_releasep(scmp_filter_ctx *ctx) {
        if (*ctx)
                sym_seccomp_release(*ctx);
}

/* The file loaded: the one its package installs where pkg-config said at build time (the cache
 * key names its build-id, read from the file, without loading it), or, where that file is
 * missing, whatever the dynamic loader finds for the soname. */
const char *libseccomp_path(void);

/* Loads libseccomp and resolves every sym_* above, once per process. Returns 0, or -EOPNOTSUPP
 * with a sentence in *error naming the library and the package that brings it; a failed load is
 * tried again on the next call. */
int dlopen_libseccomp(char **error);
