/* Random 128-bit ids, for runs and sessions: 32 lowercase hex digits with a version 4 UUID's bits,
 * as sd_id128_randomize() and sd_id128_to_string() make them, so an id made by the embedded engine
 * and one made by the service look alike. From getrandom() directly: the embedded engine, which
 * skillctl links, needs no libsystemd for them. */
#pragma once

#define RANDOM_ID_STRING_MAX 33

/* Writes a new id and its NUL into ret. Blocks only while the kernel's pool is not initialized
 * (early boot), as sd_id128_randomize() does. Returns 0 or a negative errno. */
int random_id(char ret[static RANDOM_ID_STRING_MAX]);
