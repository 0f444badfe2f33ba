/* polkit-yes: a stand-in for polkitd on a bench's private bus, where the host has no polkitd for
 * it (and no io.skilld actions installed): it answers CheckAuthorization with yes to io.skilld.run
 * and io.skilld.run-unlisted and no to everything else, as tests/daemon's fake polkit does. It
 * only lets unprivileged users run through a skilld started with --bus-address; the cost of the
 * real polkitd is measured in the VM (bench/service-bench.sh). Built and started by
 * bench/throughput.sh:
 *
 *   cc -o polkit-yes bench/polkit-yes.c $(pkg-config --cflags --libs libsystemd)
 *   DBUS_SYSTEM_BUS_ADDRESS=unix:path=... ./polkit-yes */
#include <stdbool.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

static int check(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        sd_bus_message *reply = NULL;
        const char *kind, *action;
        bool yes;
        int r;

        (void) userdata;
        (void) error;
        r = sd_bus_message_enter_container(m, 'r', "sa{sv}");
        if (r >= 0)
                r = sd_bus_message_read(m, "s", &kind);
        if (r >= 0)
                r = sd_bus_message_skip(m, "a{sv}");
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r >= 0)
                r = sd_bus_message_read(m, "s", &action);
        if (r < 0)
                return r;
        yes = strcmp(action, "io.skilld.run") == 0 || strcmp(action, "io.skilld.run-unlisted") == 0;
        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = sd_bus_message_append(reply, "(bba{ss})", yes, false, 0);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        sd_bus_message_unref(reply);
        return r;
}

static const sd_bus_vtable vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("CheckAuthorization", "(sa{sv})sa{ss}us", "(bba{ss})", check, 0),
        SD_BUS_VTABLE_END
};

int main(void) {
        sd_event *e = NULL;
        sd_bus *bus = NULL;

        if (sd_event_default(&e) < 0 || sd_bus_open_system(&bus) < 0 ||
            sd_bus_attach_event(bus, e, 0) < 0 ||
            sd_bus_add_object_vtable(bus, NULL, "/org/freedesktop/PolicyKit1/Authority",
                                     "org.freedesktop.PolicyKit1.Authority", vtable, NULL) < 0 ||
            sd_bus_request_name(bus, "org.freedesktop.PolicyKit1", 0) < 0)
                return 1;
        return sd_event_loop(e) < 0;
}
