# sqlite3 in memory and on disk, with WAL (mmap of the -shm file) and a second connection.
import os, sqlite3, tempfile

mem = sqlite3.connect(":memory:")
mem.execute("create table t (k text primary key, v integer)")
mem.executemany("insert into t values (?, ?)", [(str(i), i) for i in range(1000)])
assert mem.execute("select sum(v) from t").fetchone()[0] == 499500

d = tempfile.mkdtemp()
path = os.path.join(d, "db.sqlite")
db = sqlite3.connect(path)
assert db.execute("pragma journal_mode=wal").fetchone()[0] == "wal"
db.execute("create table t (x)")
with db:
    db.executemany("insert into t values (?)", [(i,) for i in range(100)])
other = sqlite3.connect(path)
assert other.execute("select count(*) from t").fetchone()[0] == 100
other.close()
db.execute("vacuum")
db.close()
