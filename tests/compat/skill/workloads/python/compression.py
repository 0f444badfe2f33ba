# zlib, gzip, bz2, lzma, zipfile and tarfile round trips.
import bz2, gzip, io, lzma, os, tarfile, zipfile, zlib

data = b"skilld " * 10000
assert zlib.decompress(zlib.compress(data, 9)) == data
assert gzip.decompress(gzip.compress(data)) == data
assert bz2.decompress(bz2.compress(data)) == data
assert lzma.decompress(lzma.compress(data)) == data
with zipfile.ZipFile("a.zip", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("dir/file.txt", data)
with zipfile.ZipFile("a.zip") as z:
    assert z.read("dir/file.txt") == data
    z.extractall("unzipped")
with open("plain.txt", "wb") as f:
    f.write(data)
with tarfile.open("a.tar.xz", "w:xz") as t:
    t.add("plain.txt")
with tarfile.open("a.tar.xz") as t:
    # The extraction filters came with 3.11.4 (and as a backport to some older releases).
    if hasattr(tarfile, "data_filter"):
        t.extractall("untarred", filter="data")
    else:
        t.extractall("untarred")
assert os.path.getsize("untarred/plain.txt") == len(data)
