/* The a{sv} options of the Manager's ListRunsFiltered() call, decoded and checked: which runs a
 * listing selects (the newest N, before a cursor, of one skill or state, whose id starts so,
 * everyone's) before the handler (bus-manager.c) authorizes and asks the store
 * (store_list_page()) for the page. Pure, like run-options.c: a message in, the options or a
 * D-Bus error out. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "store.h"

typedef struct ListOptions {
        uint32_t limit;                 /* 0: not given, every run that matches */
        bool has_before;
        StoreCursor before;
        bool all;                       /* everyone's runs: io.skilld.manage-runs */
        const char *skill;              /* NULL: any; borrowed from the message */
        RunState state;                 /* _RUN_STATE_INVALID: any */
        const char *prefix;             /* NULL: any id; borrowed */
} ListOptions;

/* Reads the a{sv} at the message's current position. Unknown keys, a key given twice, a wrong
 * type or value: InvalidArgs naming the key, and a negative errno. */
int list_options_parse(sd_bus_message *msg, ListOptions *ret, sd_bus_error *error);
