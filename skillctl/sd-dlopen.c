/* See sd-dlopen.h. The library is named by its soname, as the package that ships it does (a
 * libsystemd.so symlink exists only with the -dev package). RTLD_NOW: a symbol missing from an
 * older library fails here, with its name, not at the first call of it. */
#include <dlfcn.h>

#include "error.h"
#include "sd-dlopen.h"

#define LIBSYSTEMD_SONAME "libsystemd.so.0"

#define SD_DLSYM_DEFINE(name) typeof(name) *sym_##name = NULL;
SD_DLOPEN_SYMBOLS(SD_DLSYM_DEFINE)
#undef SD_DLSYM_DEFINE

/* The destructors' stand-ins (sd-dlopen.h): nothing was made, nothing is freed. */
static void unloaded_sd_bus_error_free(sd_bus_error *e) {
}

#define UNLOADED_UNREF(type, name)                      \
        static type *unloaded_##name(type *p) {         \
                return NULL;                            \
        }
UNLOADED_UNREF(sd_bus, sd_bus_flush_close_unref)
UNLOADED_UNREF(sd_bus_message, sd_bus_message_unref)
UNLOADED_UNREF(sd_bus_slot, sd_bus_slot_unref)
UNLOADED_UNREF(sd_event_source, sd_event_source_disable_unref)
UNLOADED_UNREF(sd_event, sd_event_unref)
#undef UNLOADED_UNREF

#define SD_DLSYM_DEFINE_DESTRUCTOR(name) typeof(name) *sym_##name = unloaded_##name;
SD_DLOPEN_DESTRUCTORS(SD_DLSYM_DEFINE_DESTRUCTOR)
#undef SD_DLSYM_DEFINE_DESTRUCTOR

/* Where each pointer goes, by name: resolved all together, published only when all are found. */
#define SD_DLSYM_SLOT(name) { #name, (void **) &sym_##name },
static const struct {
        const char *name;
        void **slot;
} symbols[] = {
        SD_DLOPEN_SYMBOLS(SD_DLSYM_SLOT)
        SD_DLOPEN_DESTRUCTORS(SD_DLSYM_SLOT)
};
#undef SD_DLSYM_SLOT

int dlopen_libsystemd(const char *why, char **error) {
        static bool loaded = false;
        void *found[ELEMENTSOF(symbols)];
        void *dl;

        if (loaded)
                return 0;

        dl = dlopen(LIBSYSTEMD_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!dl)
                return error_setf(error, -EOPNOTSUPP, "cannot load %s, which %s needs: %s "
                                  "(install libsystemd0)", LIBSYSTEMD_SONAME, why, strna(dlerror()));
        for (size_t i = 0; i < ELEMENTSOF(symbols); i++) {
                (void) dlerror();
                found[i] = dlsym(dl, symbols[i].name);
                if (!found[i]) {
                        const char *reason = dlerror();

                        (void) dlclose(dl);
                        return error_setf(error, -EOPNOTSUPP, "%s has no %s, which %s needs: %s "
                                          "(libsystemd0 247 or newer is needed)", LIBSYSTEMD_SONAME,
                                          symbols[i].name, why, strna(reason));
                }
        }
        /* Kept loaded for the life of the process (RTLD_NODELETE, and no dlclose()). */
        for (size_t i = 0; i < ELEMENTSOF(symbols); i++)
                *symbols[i].slot = found[i];
        loaded = true;
        return 0;
}
