/* See dlopen-util.h. */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

#include "dlopen-util.h"
#include "error.h"
#include "util.h"

int dlopen_symbols(const char *soname, const DlopenSymbol *symbols, size_t n, const char *needed_by,
                   const char *package, const char *minimum, char **error) {
        _cleanup_free_ void **found = NULL;
        void *dl;

        found = calloc(n, sizeof(void *));
        if (!found)
                return -ENOMEM;
        dl = dlopen(soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!dl)
                return error_setf(error, -EOPNOTSUPP, "cannot load %s, which %s: %s (install %s)", soname,
                                  needed_by, strna(dlerror()), package);
        for (size_t i = 0; i < n; i++) {
                (void) dlerror();
                found[i] = dlsym(dl, symbols[i].name);
                if (!found[i]) {
                        const char *reason = dlerror();

                        (void) dlclose(dl);
                        return error_setf(error, -EOPNOTSUPP, "%s has no %s, which %s: %s (%s or newer is "
                                          "needed)", soname, symbols[i].name, needed_by, strna(reason),
                                          minimum);
                }
        }
        /* Published only now that all are found; no dlclose(): kept for the process's life. */
        for (size_t i = 0; i < n; i++)
                *symbols[i].slot = found[i];
        return 0;
}
