#!/usr/bin/python3
"""Fills skilld's results store with COUNT finished runs, for bench/service-bench.sh.

Running 100 000 skills to time `skillctl list` would take hours; this writes the records
directly, in the store's own format (skilld/daemon/store.h): ROOT/runs/<id>/ with request.json,
state.json and result.json copied from a TEMPLATE record (a real finished run of the same store),
with a fresh random id, the owner and the times changed, and empty stdout.log and stderr.log.
Every record is of the current format (format_version of the template), so the service loads
them as it loads its own. Only for a stopped service: nothing here is atomic or synced, and the
service's start-up is what reads them.

Usage: store-fill.py ROOT TEMPLATE_ID COUNT OWNER:SHARE...
  e.g. store-fill.py /var/lib/skilld 0123...cdef 100000 1001:1000 1002:1000 20000-20097:98000
An owner is a uid or a range FIRST-LAST of uids sharing SHARE runs evenly. The shares must add
up to COUNT. Prints the number of records written.
"""

import json
import os
import secrets
import sys
import time


def owners_of(specs, count):
    owners = []
    for spec in specs:
        who, share = spec.split(":")
        share = int(share)
        if "-" in who:
            first, last = (int(x) for x in who.split("-"))
            uids = list(range(first, last + 1))
        else:
            uids = [int(who)]
        owners += [uids[i % len(uids)] for i in range(share)]
    if len(owners) != count:
        sys.exit(f"store-fill: the shares add up to {len(owners)}, not {count}")
    return owners


def write(dir_fd, name, data):
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    root, template_id, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    owners = owners_of(sys.argv[4:], count)
    runs = os.path.join(root, "runs")
    tdir = os.path.join(runs, template_id)
    with open(os.path.join(tdir, "request.json"), encoding="utf-8") as f:
        request = json.load(f)
    with open(os.path.join(tdir, "state.json"), encoding="utf-8") as f:
        state = json.load(f)
    with open(os.path.join(tdir, "result.json"), encoding="utf-8") as f:
        result_text = f.read()
    if state.get("state") != "finished":
        sys.exit(f"store-fill: template {template_id} is {state.get('state')}, not finished")

    duration = max(1, state["finished_usec"] - state["started_usec"])
    # Created one after the other, a second apart, ending now: the oldest first.
    start = int(time.time() * 1e6) - count * 1_000_000
    runs_fd = os.open(runs, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    for i, owner in enumerate(owners):
        run_id = secrets.token_hex(16)
        created = start + i * 1_000_000
        request.update(id=run_id, owner=owner, created_usec=created)
        state.update(started_usec=created + 1000, finished_usec=created + 1000 + duration)
        os.mkdir(run_id, 0o700, dir_fd=runs_fd)
        fd = os.open(run_id, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=runs_fd)
        try:
            write(fd, "request.json", json.dumps(request, separators=(",", ":")).encode())
            write(fd, "state.json", json.dumps(state, separators=(",", ":")).encode())
            # The result names its run: the template's id becomes the new one.
            write(fd, "result.json", result_text.replace(template_id, run_id).encode())
            write(fd, "stdout.log", b"")
            write(fd, "stderr.log", b"")
        finally:
            os.close(fd)
    os.close(runs_fd)
    print(count)


if __name__ == "__main__":
    main()
