#!/bin/bash
# The exact text the result must carry: no double survives it.
printf '%s\n' '{"big": 12345678901234567890, "id": 9007199254740993, "f": 1.0}'
