#!/usr/bin/python3
"""CPU backend benchmarks (DESIGN §6): each program of bench/programs/ through
`stax bench --json` with 1 and 2 threads, against NumPy computing the same
thing (writing every intermediate) in the same run. Prints a Markdown table;
`--out FILE` also writes it.

    /usr/bin/python3 bench/cpu_bench.py [--stax build/cli/stax] [--repeats 5] [--out F]

Ratios are what matter on a noisy machine: each fused kernel's bandwidth
against a plain parallel copy of the same bytes measured by `stax bench` in
the same process, and the NumPy time against the compiled program's.
"""
import argparse, json, os, subprocess, sys, time
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

try:
    from scipy.special import erf as np_erf  # NumPy itself has no erf
except ImportError:
    np_erf = None

try:
    import torch  # Debian python3-torch, optional
except ImportError:
    torch = None


def numpy_example_1_1(rng):
    a = rng.standard_normal((4096, 4096), dtype=np.float32)
    b = rng.standard_normal((4096, 4096), dtype=np.float32)
    return lambda: (np.maximum(a + b, np.float32(0)) * np.float32(2)).sum(axis=1)


def numpy_softmax(rng):
    x = rng.standard_normal((4096, 4096), dtype=np.float32)
    def f():
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    return f


def numpy_gelu_backward(rng):
    if np_erf is None:
        return None
    h = rng.standard_normal(1 << 24, dtype=np.float32)
    u = np.float32(1.5)
    def f():
        cdf = np.float32(0.5) * (np.float32(1) + np_erf(h * np.float32(0.70710677)))
        pdf = np.float32(0.3989423) * np.exp(np.float32(-0.5) * h * h)
        return u * (cdf + h * pdf)
    return f


def numpy_chain6(rng):
    a = rng.standard_normal(1 << 24, dtype=np.float32)
    b = rng.standard_normal(1 << 24, dtype=np.float32)
    return lambda: (np.maximum((a + b) * np.float32(0.5), np.float32(0)) - a) * (b + np.float32(1))


def torch_example_1_1(threads):
    a, b = torch.randn(4096, 4096), torch.randn(4096, 4096)
    return lambda: (torch.relu(a + b) * 2).sum(dim=1)


def torch_softmax(threads):
    x = torch.randn(4096, 4096)
    return lambda: torch.softmax(x, dim=1)


def torch_gelu_backward(threads):
    h = torch.randn(1 << 24)
    def f():
        cdf = 0.5 * (1 + torch.erf(h * 0.70710677))
        pdf = 0.3989423 * torch.exp(-0.5 * h * h)
        return 1.5 * (cdf + h * pdf)
    return f


def torch_chain6(threads):
    a, b = torch.randn(1 << 24), torch.randn(1 << 24)
    return lambda: (torch.clamp_min((a + b) * 0.5, 0) - a) * (b + 1)


PROGRAMS = [
    ("example_1_1", "interleave-lanes:w=16", numpy_example_1_1, torch_example_1_1),
    ("softmax_rows", "interleave-lanes:w=16", numpy_softmax, torch_softmax),
    ("gelu_backward", "", numpy_gelu_backward, torch_gelu_backward),
    ("chain6", "", numpy_chain6, torch_chain6),
]


def median_time(f, repeats):
    f()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return ts[len(ts) // 2] * 1e3


def stax_bench(stax, prog, transform, threads, repeats):
    cmd = [stax, "bench", os.path.join(HERE, "programs", prog + ".stx"), "--threads", str(threads),
           "--repeats", str(repeats), "--json"]
    if transform:
        cmd += ["--transform", transform]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"stax bench failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    return json.loads(r.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stax", default=os.path.join(HERE, "..", "build", "cli", "stax"))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out")
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    tcol = " PyTorch eager, 1 / 2 threads (ms) |" if torch else ""
    rows = ["| program | stax 1 thread (ms) | stax 2 threads (ms) | NumPy (ms) | NumPy / stax (1 thread) |" + tcol +
            " main kernel vs copy, 1 / 2 threads | slowest JIT compile (ms) | bits |",
            "|---|---|---|---|---|" + ("---|" if torch else "") + "---|---|---|"]
    for prog, transform, make_numpy, make_torch in PROGRAMS:
        one = stax_bench(a.stax, prog, transform, 1, a.repeats)
        two = stax_bench(a.stax, prog, transform, 2, a.repeats)
        f = make_numpy(rng)
        np_ms = median_time(f, a.repeats) if f else None
        main1 = max(one["kernels"], key=lambda k: k["bytes"])
        main2 = max(two["kernels"], key=lambda k: k["bytes"])
        compile_ms = max(k["compile_ms"] for k in one["kernels"])
        name = prog + (f" (`{transform}`)" if transform else "")
        np_txt = f"{np_ms:.1f}" if np_ms else "n/a (no erf: run scripts/setup.sh)"
        speed = f"{np_ms / one['total_ms']:.2f}x" if np_ms else "n/a"
        ttxt = ""
        if torch:
            tt = []
            for th in (1, 2):
                torch.set_num_threads(th)
                tt.append(median_time(make_torch(th), a.repeats))
            ttxt = f" {tt[0]:.1f} / {tt[1]:.1f} |"
        rows.append(f"| {name} | {one['total_ms']:.1f} | {two['total_ms']:.1f} | {np_txt} | {speed} |{ttxt} "
                    f"{main1['ratio_to_copy']:.2f} / {main2['ratio_to_copy']:.2f} | {compile_ms:.1f} | "
                    f"{'identical' if one['bits'].startswith('identical') else one['bits']} |")
        print(rows[-1], flush=True)
    text = "\n".join(rows) + "\n"
    print()
    print(text)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
