#!/bin/bash
printf 'hello artifact\n' > "${SANDBOX_FILES_DIR:-/out/files/}report.txt"
echo '{"files": ["report.txt"]}'
