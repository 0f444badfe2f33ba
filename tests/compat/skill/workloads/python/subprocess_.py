# subprocess: run, pipes, a shell, a pipeline of two processes, a timeout.
import subprocess, sys

out = subprocess.run(["ls", "/"], capture_output=True, text=True, check=True).stdout
assert "usr" in out.split()
assert subprocess.run("echo a b | wc -w", shell=True, capture_output=True, text=True).stdout.strip() == "2"
p1 = subprocess.Popen(["printf", "b\\na\\n"], stdout=subprocess.PIPE)
p2 = subprocess.Popen(["sort"], stdin=p1.stdout, stdout=subprocess.PIPE, text=True)
p1.stdout.close()
assert p2.communicate()[0] == "a\nb\n"
assert p1.wait() == 0
r = subprocess.run([sys.executable, "-c", "import sys; sys.exit(3)"])
assert r.returncode == 3
try:
    subprocess.run(["sleep", "5"], timeout=0.2)
    raise AssertionError("no timeout")
except subprocess.TimeoutExpired:
    pass
