# Sockets on lo: TCP over IPv4 and IPv6, UDP, a Unix socket pair, name lookups of localhost, the
# interfaces, and an HTTP server and client of the standard library.
import http.server, socket, threading, urllib.request

srv = socket.create_server(("127.0.0.1", 0))
port = srv.getsockname()[1]
c = socket.create_connection(("127.0.0.1", port))
conn, _ = srv.accept()
c.sendall(b"ping"); assert conn.recv(4) == b"ping"
for s in (c, conn, srv): s.close()
try:
    s6 = socket.create_server(("::1", 0), family=socket.AF_INET6)
    s6.close()
except OSError:
    pass  # a kernel without IPv6 on lo
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.1", 0)); u.sendto(b"d", u.getsockname()); assert u.recv(1) == b"d"
a, b = socket.socketpair(); a.send(b"z"); assert b.recv(1) == b"z"
socket.getaddrinfo("localhost", 80)
socket.gethostname()
socket.if_nameindex()

class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"fine")
    def log_message(self, *a):
        pass
httpd = http.server.HTTPServer(("127.0.0.1", 0), H)
threading.Thread(target=httpd.handle_request, daemon=True).start()
assert urllib.request.urlopen(f"http://127.0.0.1:{httpd.server_port}/", timeout=5).read() == b"fine"
httpd.server_close()
