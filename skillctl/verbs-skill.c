/* "skillctl skill ...": lint, show and package skills from a folder or a .skill file. */
#include "log.h"
#include "verbs.h"

int verb_skill(int argc, char *argv[]) {
        if (argc < 2)
                return usage_error("skill", "missing subcommand (lint, show, package)");
        return usage_error(argv[1], "unknown skill subcommand (lint, show, package)");
}
