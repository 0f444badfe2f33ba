# Files as a skill handles them: tempfile, shutil, pathlib, os.walk, locks, links, xattrs absent,
# sendfile and copy_file_range through shutil.
import fcntl, os, pathlib, shutil, stat, tempfile

d = pathlib.Path(tempfile.mkdtemp())
(d / "a" / "b").mkdir(parents=True)
(d / "a" / "b" / "f.txt").write_text("hello\n" * 1000)
shutil.copytree(d / "a", d / "copy")
shutil.copy2(d / "a" / "b" / "f.txt", d / "g.txt")
assert sum(len(f) for _, _, f in os.walk(d)) == 3
os.symlink("g.txt", d / "link")
os.link(d / "g.txt", d / "hard")
assert os.stat(d / "hard").st_nlink == 2
with open(d / "g.txt", "r+") as f:
    fcntl.flock(f, fcntl.LOCK_EX)
    fcntl.lockf(f, fcntl.LOCK_UN)
os.chmod(d / "g.txt", stat.S_IRUSR)
shutil.make_archive(str(d / "arch"), "gztar", d / "a")
shutil.rmtree(d / "copy")
with tempfile.TemporaryDirectory() as t, tempfile.SpooledTemporaryFile(max_size=10) as s:
    s.write(b"more than ten bytes")
    s.seek(0)
    assert s.read(4) == b"more"
shutil.disk_usage(d)
os.utime(d / "hard")
assert shutil.which("sh")
