#!/usr/bin/python3
"""`stax run` end to end, as a user sees it: the whole process (parse, read the
.npy inputs, compute, write DIR/out.npy) on bench/programs/chain6.stx (a 6-op
f32 chain over 2^24 elements), against one NumPy process doing the same load,
chain and save. Interpreter and `--backend cpu` are both timed; the runs are
interleaved so that noise from other jobs on the machine hits every variant
alike. Checks that the three outputs are bit-identical; prints medians of
wall, user and system time and the ratios to NumPy (Markdown, or `--json`).

    /usr/bin/python3 bench/run_e2e.py [--stax build/cli/stax] [--repeats 7] [--dir D] [--json]
"""
import argparse, json, os, subprocess, sys, tempfile, time
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "programs", "chain6.stx")
N = 1 << 24

# The same chain as chain6.stx: mul(sub(maximum(mul(add(x, y), 0.5), 0.0), x), add(y, 1.0)).
NUMPY_SCRIPT = """
import sys
import numpy as np
d = sys.argv[1]
a = np.load(d + "/a.npy")
b = np.load(d + "/b.npy")
out = (np.maximum((a + b) * np.float32(0.5), np.float32(0.0)) - a) * (b + np.float32(1.0))
np.save(sys.argv[2] + "/out.npy", out)
"""


def timed(cmd):
    """Wall, user and system seconds of one child process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode()
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{err}")
    return wall, ru.ru_utime, ru.ru_stime


def median(v):
    v = sorted(v)
    return v[len(v) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stax", default=os.path.join(HERE, "..", "build", "cli", "stax"))
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--dir", help="scratch folder (default: a fresh temporary one)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    d = a.dir or tempfile.mkdtemp(prefix="stax_run_e2e_")
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(1)
    for name in ("a", "b"):  # the same bits every time; kept between runs (no fresh dirty pages)
        x = rng.standard_normal(N, dtype=np.float32)
        path = os.path.join(d, name + ".npy")
        if not os.path.exists(path) or not np.array_equal(np.load(path, mmap_mode="r"), x):
            np.save(path, x)
    inputs = ["--input", f"a={d}/a.npy", "--input", f"b={d}/b.npy"]
    variants = {
        "numpy": (os.path.join(d, "numpy"), lambda o: ["/usr/bin/python3", "-c", NUMPY_SCRIPT, d, o]),
        "stax run (interp)": (os.path.join(d, "interp"), lambda o: [a.stax, "run", PROGRAM, *inputs, "--out", o]),
        "stax run --backend cpu": (os.path.join(d, "cpu"),
                                   lambda o: [a.stax, "run", PROGRAM, "--backend", "cpu", *inputs, "--out", o]),
    }
    samples = {k: [] for k in variants}
    for out, make in variants.values():  # warm-up: page cache, dynamic loader
        os.makedirs(out, exist_ok=True)
        timed(make(out))
    for _ in range(a.repeats):
        for name, (out, make) in variants.items():
            samples[name].append(timed(make(out)))

    ref = np.load(os.path.join(variants["numpy"][0], "out.npy"))
    bits = {}
    for name, (out, _) in variants.items():
        got = np.load(os.path.join(out, "out.npy"))
        bits[name] = got.dtype == ref.dtype and got.shape == ref.shape and \
            np.array_equal(got.view(np.uint32), ref.view(np.uint32))

    np_wall = median([s[0] for s in samples["numpy"]])
    rows = []
    for name, s in samples.items():
        wall = median([x[0] for x in s])
        rows.append({"variant": name, "wall_s": wall, "user_s": median([x[1] for x in s]),
                     "sys_s": median([x[2] for x in s]), "ratio_to_numpy": wall / np_wall,
                     "bit_identical_to_numpy": bool(bits[name])})
    result = {"program": os.path.relpath(PROGRAM, os.path.join(HERE, "..")), "elements": N,
              "repeats": a.repeats, "stax": a.stax, "rows": rows}
    if a.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"`stax run` end to end, {a.repeats} interleaved repeats (median), chain6 over 2^24 f32, "
              f"2 inputs from .npy, output to .npy")
        print()
        print("| variant | wall (s) | user (s) | sys (s) | wall / NumPy | output bits |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['variant']} | {r['wall_s']:.3f} | {r['user_s']:.3f} | {r['sys_s']:.3f} | "
                  f"{r['ratio_to_numpy']:.2f}x | {'identical' if r['bit_identical_to_numpy'] else 'DIFFERENT'} |")
    if not all(bits.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
