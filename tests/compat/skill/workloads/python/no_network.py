# Without network, what reaches out fails cleanly with the errors a program handles (no refused
# call): a name that does not resolve, a connection nobody accepts. Nothing here ever leaves the
# machine: the name is under .invalid, the address is lo.
import socket, urllib.error, urllib.request

try:
    urllib.request.urlopen("http://skilld-compat.invalid/", timeout=3)
    raise AssertionError("reached a network")
except urllib.error.URLError:
    pass
probe = socket.socket()
probe.bind(("127.0.0.1", 0))
port = probe.getsockname()[1]
probe.close()
s = socket.socket()
s.settimeout(2)
try:
    s.connect(("127.0.0.1", port))
    raise AssertionError("a closed port accepted")
except ConnectionRefusedError:
    pass
