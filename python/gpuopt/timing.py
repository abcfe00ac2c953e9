"""Timing helpers shared by the benchmarks (gpuopt.bench, gpuopt.kernelbench)."""

from __future__ import annotations

import time

#: Shortest pause before each timed call (see settle).
SETTLE_S = 0.005
#: Longest wait for the process's threads to go idle before a timed call.
SETTLE_MAX_S = 0.25
#: "Idle": the process used less CPU time than IDLE_FRACTION of an IDLE_WINDOW_S
#: window. (CPU time is accounted per scheduler tick, 4 ms here: a shorter window
#: often sees no tick even while a thread spins.)
IDLE_WINDOW_S = 0.010
IDLE_FRACTION = 0.3


def settle() -> float:
    """Waits until no thread of this process is running; returns the seconds waited.

    ONNX Runtime's workers spin for ~40 ms after each run (measured on the 2-core
    machine: one core busy for 40 ms with the main thread asleep), OpenMP's for a
    shorter time. A fixed 5 ms pause let that spinning take a core from the next
    row's call, which slowed whichever row followed ONNX Runtime (gpuopt's median
    on Rolling-UNet-S: 30 ms alone, 37 ms interleaved with ORT). So: a short
    pause, then IDLE_WINDOW_S windows until one is idle (at most SETTLE_MAX_S).
    """
    start = time.perf_counter()
    time.sleep(SETTLE_S)
    while time.perf_counter() - start < SETTLE_MAX_S:
        cpu0, wall0 = time.process_time(), time.perf_counter()
        time.sleep(IDLE_WINDOW_S)
        if time.process_time() - cpu0 < IDLE_FRACTION * (time.perf_counter() - wall0):
            break
    return time.perf_counter() - start
