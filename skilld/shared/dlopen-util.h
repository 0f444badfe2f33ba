/* Libraries loaded on first use instead of linked: what only some commands need (libarchive for
 * archives, libsystemd for the bus in skillctl) costs the others nothing at start-up. */
#pragma once

#include <stddef.h>

typedef struct DlopenSymbol {
        const char *name;
        void **slot;                    /* where the address goes: a sym_* function pointer */
} DlopenSymbol;

/* dlopen()s soname (the name its package ships; a .so symlink exists only with the -dev package)
 * with RTLD_NOW, so that a symbol an older library lacks fails here, by name, not at its first
 * call, and resolves every symbol: all slots are set, or none. The library stays loaded for the
 * life of the process (RTLD_NODELETE). On failure -EOPNOTSUPP and an error naming the library,
 * what needs it (needed_by) and the package to install or the version to upgrade to. */
int dlopen_symbols(const char *soname, const DlopenSymbol *symbols, size_t n, const char *needed_by,
                   const char *package, const char *minimum, char **error);
