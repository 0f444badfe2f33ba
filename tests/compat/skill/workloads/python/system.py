# What a skill asks of its system: locale, time zones, users, limits, CPUs, platform, signals,
# timers, ctypes.
import ctypes, datetime, getpass, locale, os, platform, resource, signal, time

locale.setlocale(locale.LC_ALL, "")
locale.setlocale(locale.LC_ALL, "C.UTF-8")
time.strftime("%c")
datetime.datetime.now().astimezone()
try:
    import zoneinfo
    zoneinfo.ZoneInfo("UTC")
except Exception:
    pass
getpass.getuser()
resource.getrlimit(resource.RLIMIT_NOFILE)
resource.getrusage(resource.RUSAGE_SELF)
assert os.cpu_count() >= 1
os.sched_getaffinity(0)
os.getloadavg()
platform.platform()
os.nice(1)
got = []
signal.signal(signal.SIGUSR1, lambda *a: got.append(1))
os.kill(os.getpid(), signal.SIGUSR1)
signal.signal(signal.SIGALRM, lambda *a: got.append(2))
signal.setitimer(signal.ITIMER_REAL, 0.01)
time.sleep(0.1)
assert got == [1, 2], got
assert ctypes.CDLL(None).getpid() == os.getpid()
time.monotonic(); time.process_time(); time.perf_counter()
