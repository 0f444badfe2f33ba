# Threads: a pool, locks, conditions, thread-local data, a queue.
import concurrent.futures, queue, threading

def work(n):
    return sum(i * i for i in range(n))

with concurrent.futures.ThreadPoolExecutor(max_workers=8) as ex:
    assert list(ex.map(work, [10, 100, 1000])) == [work(10), work(100), work(1000)]
lock, total = threading.Lock(), [0]
def add():
    for _ in range(1000):
        with lock:
            total[0] += 1
ts = [threading.Thread(target=add) for _ in range(4)]
for t in ts: t.start()
for t in ts: t.join()
assert total[0] == 4000
q = queue.Queue()
threading.Thread(target=lambda: q.put("hi"), daemon=True).start()
assert q.get(timeout=5) == "hi"
ev = threading.Event()
threading.Timer(0.05, ev.set).start()
assert ev.wait(5)
