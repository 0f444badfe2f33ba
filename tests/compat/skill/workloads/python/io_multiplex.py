# mmap (anonymous, file-backed), select, poll, epoll, selectors, eventfd, pipes.
import mmap, os, select, selectors

m = mmap.mmap(-1, 1 << 20)
m[:5] = b"hello"
with open("f.bin", "wb") as f:
    f.write(b"\0" * 4096)
with open("f.bin", "r+b") as f:
    fm = mmap.mmap(f.fileno(), 0)
    fm[0:3] = b"abc"
    fm.flush()
    fm.close()
r, w = os.pipe()
os.write(w, b"x")
assert select.select([r], [], [], 1)[0] == [r]
p = select.poll(); p.register(r, select.POLLIN)
assert p.poll(1000)
e = select.epoll(); e.register(r, select.EPOLLIN)
assert e.poll(1)
e.close()
sel = selectors.DefaultSelector(); sel.register(r, selectors.EVENT_READ)
assert sel.select(1)
efd = os.eventfd(0)
os.eventfd_write(efd, 3)
assert os.eventfd_read(efd) == 3
os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
