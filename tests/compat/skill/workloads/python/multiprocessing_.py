# multiprocessing with each start method: a pool, a queue, a lock (POSIX semaphores in /dev/shm),
# shared memory.
import multiprocessing as mp
from multiprocessing import shared_memory

def square(x):
    return x * x

def put(q, lock):
    with lock:
        q.put("from child")

if __name__ == "__main__":
    for method in ("fork", "spawn", "forkserver"):
        ctx = mp.get_context(method)
        with ctx.Pool(2) as pool:
            assert pool.map(square, range(5)) == [0, 1, 4, 9, 16]
        q, lock = ctx.Queue(), ctx.Lock()
        p = ctx.Process(target=put, args=(q, lock))
        p.start()
        assert q.get(timeout=20) == "from child"
        p.join()
        assert p.exitcode == 0
    shm = shared_memory.SharedMemory(create=True, size=4096)
    shm.buf[0] = 42
    other = shared_memory.SharedMemory(name=shm.name)
    assert other.buf[0] == 42
    other.close()
    shm.close()
    shm.unlink()
