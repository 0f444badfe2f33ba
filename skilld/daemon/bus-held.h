/* A method call held while something is asked on its behalf without blocking the event loop
 * (polkit's verdict, the caller's uid, an inspection of its skill) goes back into its bus's read
 * queue once the answer is in, and is dispatched again from the top: the filters and the handler
 * see it as if it had just arrived, and find what was asked. */
#pragma once

#include <systemd/sd-bus.h>

/* Puts a held call back for dispatch. Fails only with no memory or a closed bus: then nothing
 * will reach its handler, and the holder answers or drops it. */
int bus_message_redispatch(sd_bus_message *m);
