/* Held calls dispatched once more: see bus-held.h. */
#include <stdbool.h>

#include "bus-held.h"

int bus_message_redispatch(sd_bus_message *m) {
        int r;

        /* The handler read its arguments the first time: from the start, as on arrival. */
        r = sd_bus_message_rewind(m, true);
        if (r < 0)
                return r;
        return sd_bus_enqueue_for_read(sd_bus_message_get_bus(m), m);
}
