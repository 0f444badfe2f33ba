/* See seccomp-dlopen.h. */
#include <unistd.h>

#include "dlopen-util.h"
#include "seccomp-dlopen.h"
#include "util.h"

#define LIBSECCOMP_SONAME "libseccomp.so.2"

#define SECCOMP_DLSYM_DEF(name) typeof(name) *sym_##name
SECCOMP_DLSYM_DEF(seccomp_attr_set);
SECCOMP_DLSYM_DEF(seccomp_export_bpf);
SECCOMP_DLSYM_DEF(seccomp_init);
SECCOMP_DLSYM_DEF(seccomp_release);
SECCOMP_DLSYM_DEF(seccomp_rule_add_array);
SECCOMP_DLSYM_DEF(seccomp_syscall_resolve_name);
SECCOMP_DLSYM_DEF(seccomp_syscall_resolve_num_arch);

#define SYM(name) { #name, (void **) &sym_##name }
static const DlopenSymbol symbols[] = {
        SYM(seccomp_attr_set),
        SYM(seccomp_export_bpf),
        SYM(seccomp_init),
        SYM(seccomp_release),
        SYM(seccomp_rule_add_array),
        SYM(seccomp_syscall_resolve_name),
        SYM(seccomp_syscall_resolve_num_arch),
};

const char *libseccomp_path(void) {
        /* By its path, not its soname: what the dynamic loader would find for a soname depends on
         * $LD_LIBRARY_PATH, its cache and the CPU (glibc-hwcaps), which the cache key could only
         * guess at; a path is one file, whose build-id the key can read. */
        return access(LIBSECCOMP_PATH, F_OK) >= 0 ? LIBSECCOMP_PATH : LIBSECCOMP_SONAME;
}

int dlopen_libseccomp(char **error) {
        if (sym_seccomp_init)
                return 0;
        return dlopen_symbols(libseccomp_path(), symbols, ELEMENTSOF(symbols), "the sandbox's seccomp filter needs",
                              "libseccomp2", "libseccomp 2.5", error);
}
