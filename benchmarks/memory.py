"""Memory held by autograd across MLP training steps: resident set size after a first batch of
steps and after many more. A tape that leaks (saved arrays, graph references, cached gradients)
grows by megabytes per step at these sizes, so a flat RSS and a constant number of live
Operation objects show that each graph is freed after its backward."""
import gc
import os
import resource

from . import mlp

NAME = "memory"
DESCRIPTION = ("autograd RSS growth over MLP training steps (after 20 and after 200), and over "
               "1,000 graph-mode replays of the same step (after 20 and after 1,020)")
REPLAY_STEPS = (20, 1020)
TOLERANCE_MB = 2.0      # allocator and interpreter noise; one leaked MLP graph is ~4 MB


def sizes(quick):
    size = mlp.sizes(quick)
    size["steps"] = (5, 30) if quick else (20, 200)
    # A quick run's graphs are a few KiB, so RSS cannot show a leak there (heap reuse after the
    # other workloads moves it by about a MiB either way); its exact check is the Operation count.
    size["tolerance_mb"] = 16.0 if quick else TOLERANCE_MB
    return size


def resident_mb():
    """Current resident set size in MiB (/proc/self/statm), or the peak where /proc is absent."""
    try:
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2 ** 20
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def live_operations():
    from autograd import Operation
    # issubclass(type(...)) rather than isinstance: isinstance reads __class__, which wakes lazy
    # module proxies (torch's) into printing deprecation warnings.
    return sum(1 for obj in gc.get_objects() if issubclass(type(obj), Operation))


def _settle():
    """Live Operations, then RSS after a collection. Counting first matters: the list of all
    objects that the count builds (a MiB or so) must be allocated before both RSS readings.
    A collection first: a replay program is a reference cycle (a function and its globals),
    so the Operations of an earlier workload's captured step wait for the collector."""
    gc.collect()
    operations = live_operations()
    gc.collect()
    return operations, resident_mb()


def measure(size, build=None):
    """RSS and live Operation counts after the first and the last of ``size['steps']`` steps
    of ``build(size)`` (default: the eager MLP step)."""
    first, last = size["steps"]
    bench = (build or mlp.build_autograd)(size)
    for _ in range(first):
        bench.step()
    ops_first, rss_first = _settle()
    for _ in range(last - first):
        bench.step()
    ops_last, rss_last = _settle()
    growth = rss_last - rss_first
    return {
        "steps": [first, last],
        "rss_mb": [round(rss_first, 2), round(rss_last, 2)],
        "growth_mb": round(growth, 2),
        "live_operations": [ops_first, ops_last],
        "tolerance_mb": size["tolerance_mb"],
        "grows": bool(growth > size["tolerance_mb"] or ops_last > ops_first),
    }
