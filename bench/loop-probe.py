#!/usr/bin/python3
"""How long skilld's event loop keeps other callers waiting: org.freedesktop.DBus.Peer.Ping sent
to the service every 5 ms for SECONDS, through the bus at ADDRESS, each waited for. sd-bus answers
a Ping itself, without a handler of skilld's, so its round trip is the bus's and the time the
call waits for skilld's loop to get to it (throughput.sh, SKILLD_BENCH_PROBE=1).

Usage: loop-probe.py ADDRESS SECONDS"""
import sys
import time

from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection


def main():
    address, seconds = sys.argv[1], float(sys.argv[2])
    conn = open_dbus_connection(bus=address)
    service = DBusAddress("/io/skilld/Skilld1", bus_name="io.skilld.Skilld1",
                          interface="org.freedesktop.DBus.Peer")
    waits = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.monotonic()
        conn.send_and_get_reply(new_method_call(service, "Ping"), timeout=30)
        waits.append((time.monotonic() - t) * 1000)
        time.sleep(0.005)
    waits.sort()
    n = len(waits)

    def q(p):
        return waits[min(n - 1, int(p * n))]

    print(f"  Ping to skilld meanwhile: {n} calls, median {q(0.5):.2f} ms, p90 {q(0.9):.2f}, "
          f"p99 {q(0.99):.2f}, max {waits[-1]:.2f}")


if __name__ == "__main__":
    main()
