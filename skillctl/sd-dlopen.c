/* See sd-dlopen.h. */
#include "dlopen-util.h"
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
static const DlopenSymbol symbols[] = {
        SD_DLOPEN_SYMBOLS(SD_DLSYM_SLOT)
        SD_DLOPEN_DESTRUCTORS(SD_DLSYM_SLOT)
};
#undef SD_DLSYM_SLOT

int dlopen_libsystemd(const char *why, char **error) {
        static bool loaded = false;
        _cleanup_free_ char *needed_by = NULL;
        int r;

        if (loaded)
                return 0;
        needed_by = strdup_printf("%s needs", why);
        if (!needed_by)
                return -ENOMEM;
        r = dlopen_symbols(LIBSYSTEMD_SONAME, symbols, ELEMENTSOF(symbols), needed_by, "libsystemd0",
                           "libsystemd0 247", error);
        if (r < 0)
                return r;
        loaded = true;
        return 0;
}
