/* BuildEnvironment() of the Manager object (see bus-env.c). */
#pragma once

#include <systemd/sd-bus.h>

int method_build_environment(sd_bus_message *msg, void *userdata, sd_bus_error *error);
