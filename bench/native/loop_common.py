# What the Python loops of bench/native share (as loop_common.h does for the C++ ones): the
# answer to each stdin line "KNOB PASSES" that bench/harness-overhead.ts sends. The knob is set
# outside the timed passes; each pass asks every query once, each timed alone, and the line
# printed holds per-pass QPS by wall time and by CPU time, mean latency and recall@k.
import json
import sys
import time
from typing import Callable, Iterable, Sequence


def serve(
    nq: int,
    k: int,
    gt: Iterable[Iterable[int]],
    set_knob: Callable[[int], None],
    search: Callable[[int], Sequence[int]],
    cpu: Callable[[], float] = time.thread_time,
) -> None:
    """Answers stdin until it closes. `search(i)` returns query i's ids; `cpu` is the clock of the
    searching thread (time.process_time for an engine that searches on threads of its own)."""
    want = [set(int(x) for x in row) for row in gt]
    perf = time.perf_counter
    lat = [0.0] * nq
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        knob, passes = int(parts[0]), int(parts[1])
        set_knob(knob)
        qps, cpu_qps, mean_ms = [], [], []
        found: list[Sequence[int]] = []
        for _ in range(passes):
            found = [()] * nq
            cpu0 = cpu()
            start = perf()
            for i in range(nq):
                t = perf()
                found[i] = search(i)
                lat[i] = perf() - t
            wall = perf() - start
            cpu_qps.append(nq / max(cpu() - cpu0, 1e-9))
            qps.append(nq / wall)
            mean_ms.append(sum(lat) / nq * 1000)
        hits = sum(len(want[i].intersection(int(x) for x in found[i])) for i in range(nq))
        print(json.dumps({"ef": knob, "qps": qps, "cpu_qps": cpu_qps, "mean_ms": mean_ms, "recall": hits / (nq * k)}), flush=True)
