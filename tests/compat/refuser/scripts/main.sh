#!/bin/bash
# Both calls are refused by the skill's filter alone, not by skilld.service's own hardening
# (which allows mount namespaces and AF_INET to the service, and whose refusals the runs inherit
# unrecorded: policy/seccomp.md).
unshare -m true 2>/dev/null || echo "unshare refused"
/usr/bin/python3 -c 'import socket
try:
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
except OSError as e:
    print("raw", e.errno)
'
exit 1
