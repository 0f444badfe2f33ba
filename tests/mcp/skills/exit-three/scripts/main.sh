#!/bin/bash
echo '{"ok": false, "reason": "failing on purpose"}'
echo "exit-three: failing on purpose" >&2
exit 3
