/* See list-options.h. Each refusal names the option and what it takes, since the caller may be
 * a script built against a later skilld's documentation. */
#include "bus-errors.h"
#include "lint.h"
#include "list-options.h"
#include "run-options.h"

int list_options_parse(sd_bus_message *msg, ListOptions *ret, sd_bus_error *error) {
        static const char *const known[] = { "limit", "before", "all", "skill", "state", "prefix" };
        static const char *const types[] = { "u", "s", "b", "s", "s", "s" };
        ListOptions o = { .state = _RUN_STATE_INVALID };
        unsigned seen = 0;
        int r;

        r = sd_bus_message_enter_container(msg, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(msg, 'e', "sv")) > 0) {
                const char *key, *s;
                size_t i;
                int b;

                r = sd_bus_message_read(msg, "s", &key);
                if (r < 0)
                        return r;
                for (i = 0; i < ELEMENTSOF(known); i++)
                        if (streq(key, known[i]))
                                break;
                if (i == ELEMENTSOF(known))
                        return bus_invalid_args(error, "Unknown option '%s' (known: limit, before, all, skill, state, "
                                                "prefix).",
                                                bus_text_ok(key, 64) ? key : "?");
                if (seen & (1U << i))
                        return bus_invalid_args(error, "The option %s is given twice.", key);
                seen |= 1U << i;

                r = sd_bus_message_enter_container(msg, 'v', types[i]);
                if (r < 0)
                        return bus_invalid_args(error, "The option %s must be of type %s.", key, types[i]);
                switch (i) {
                case 0:
                        r = sd_bus_message_read(msg, "u", &o.limit);
                        if (r >= 0 && o.limit == 0)
                                return bus_invalid_args(error, "The option limit must be at least 1 "
                                                        "(leave it out for every run).");
                        break;
                case 1:
                        r = sd_bus_message_read(msg, "s", &s);
                        if (r >= 0 && store_cursor_parse(s, &o.before) < 0)
                                return bus_invalid_args(error, "The option before is not a cursor (pass the "
                                                        "'next' an earlier call returned).");
                        o.has_before = true;
                        break;
                case 2:
                        r = sd_bus_message_read(msg, "b", &b);
                        o.all = b;
                        break;
                case 3:
                        r = sd_bus_message_read(msg, "s", &o.skill);
                        if (r >= 0 && !skill_name_is_valid(o.skill))
                                return bus_invalid_args(error, "The option skill is not a valid skill name.");
                        break;
                case 5:
                        r = sd_bus_message_read(msg, "s", &o.prefix);
                        if (r >= 0 && (isempty(o.prefix) || strlen(o.prefix) > STORE_RUN_ID_LEN ||
                                       o.prefix[strspn(o.prefix, "0123456789abcdef")] != '\0'))
                                return bus_invalid_args(error, "The option prefix must be 1 to 32 lowercase "
                                                        "hexadecimal digits.");
                        break;
                default:
                        r = sd_bus_message_read(msg, "s", &s);
                        if (r >= 0) {
                                o.state = run_state_from_string(s);
                                if (o.state < 0)
                                        return bus_invalid_args(error, "The option state must be queued, "
                                                                "running, finished or interrupted.");
                        }
                        break;
                }
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(msg);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(msg);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(msg);
        if (r < 0)
                return r;
        *ret = o;
        return 0;
}
