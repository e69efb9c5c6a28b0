"""The NumPy baseline of bench/interp_bench.cpp: the same 6-op f32 chain.

Reads a.npy and b.npy from the folder given as argv[1], times the chain
(median of `repeats`), writes out.npy there and prints the median seconds.
NumPy writes every intermediate; the interpreter evaluates blocks in cache.
"""
import sys, time
import numpy as np

d = sys.argv[1]
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
a = np.load(d + "/a.npy")
b = np.load(d + "/b.npy")
half = np.float32(0.5)
one = np.float32(1.0)
zero = np.float32(0.0)
times = []
for _ in range(repeats):
    t0 = time.perf_counter()
    # mul(sub(maximum(mul(add(a, b), 0.5), 0.0), a), add(b, 1.0))
    out = (np.maximum((a + b) * half, zero) - a) * (b + one)
    times.append(time.perf_counter() - t0)
np.save(d + "/out.npy", out)
times.sort()
print(times[len(times) // 2])
