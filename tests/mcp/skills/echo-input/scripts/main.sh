#!/bin/bash
# The input as the client wrote it, and the file, as one JSON object (the file holds no quotes).
printf '{"input": %s, "file": "%s"}\n' "$(cat)" "$(cat data.txt 2>/dev/null | tr -d '\n"\\')"
