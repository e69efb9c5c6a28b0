#!/usr/bin/python3
"""CPU backend benchmarks (docs/design.md §6): each program of bench/programs/ through
`stax bench --json` with 1 and 2 threads, against NumPy computing the same
thing (writing every intermediate) in the same run. Prints a Markdown table;
`--out FILE` also writes it.

    /usr/bin/python3 bench/cpu_bench.py [--stax build/cli/stax] [--repeats 5] [--out F]
        [--math] [--torch-python .venv-bench/bin/python]

`--math` prints the transcendental table instead (docs/cpu-backend.md, "Correctly rounded functions"):
softmax over rows and GELU backward on one thread with the three math
bindings of the CPU backend side by side (STAX_CPU_MATH: the vector variants,
the scalar entry points of the correctly rounded mathlib, and the host's libm
— not correctly rounded, the baseline), against NumPy and PyTorch eager on
one thread in the same run. PyTorch is timed in this interpreter when it has
torch, else in the one `--torch-python` names (a venv with torch: see
README), else the column says "torch absent".

Both sides compute on the same inputs: NumPy's arrays (standard normal) are
written as .npy and given to `stax bench --input`.

Ratios are what matter on a noisy machine: each fused kernel's bandwidth
against a plain parallel copy of the same bytes measured by `stax bench` in
the same process, and the NumPy time against the compiled program's.
"""
import argparse, json, os, subprocess, sys, tempfile, time
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
    return lambda: (np.maximum(a + b, np.float32(0)) * np.float32(2)).sum(axis=1), {"primals_1": a, "primals_2": b}


def numpy_softmax(rng):
    x = rng.standard_normal((4096, 4096), dtype=np.float32)
    def f():
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    return f, {"x": x}


def numpy_gelu_backward(rng):
    h = rng.standard_normal(1 << 24, dtype=np.float32)
    u = np.float32(1.5)
    inputs = {"upstream": np.array(u, dtype=np.float32), "h": h}
    if np_erf is None:
        return None, inputs
    def f():
        cdf = np.float32(0.5) * (np.float32(1) + np_erf(h * np.float32(0.70710677)))
        pdf = np.float32(0.3989423) * np.exp(np.float32(-0.5) * h * h)
        return u * (cdf + h * pdf)
    return f, inputs


def numpy_chain6(rng):
    a = rng.standard_normal(1 << 24, dtype=np.float32)
    b = rng.standard_normal(1 << 24, dtype=np.float32)
    return lambda: (np.maximum((a + b) * np.float32(0.5), np.float32(0)) - a) * (b + np.float32(1)), {"a": a, "b": b}


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
    ("softmax_rows", "interleave-lanes:w=32", numpy_softmax, torch_softmax),
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


def write_inputs(inputs, folder):
    """The NumPy side's inputs as .npy files: `stax bench --input` flags."""
    flags = []
    for name, arr in inputs.items():
        path = os.path.join(folder, name + ".npy")
        np.save(path, arr)
        flags += ["--input", f"{name}={path}"]
    return flags


def stax_bench(stax, prog, transform, threads, repeats, math=None, inputs=()):
    cmd = [stax, "bench", os.path.join(HERE, "programs", prog + ".stx"), "--threads", str(threads),
           "--repeats", str(repeats), "--json", *inputs]
    if transform:
        cmd += ["--transform", transform]
    env = dict(os.environ, STAX_CPU_MATH=math) if math else None
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    # Exit status 1: the output bits differ from the interpreter's, expected
    # of the host libm binding (its "bits" field says where).
    if r.returncode != 0 and not (math == "libm" and r.returncode == 1):
        sys.exit(f"stax bench failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    return json.loads(r.stdout)


MATH_PROGRAMS = [p for p in PROGRAMS if p[0] in ("softmax_rows", "gelu_backward")]


def torch_ms(prog, repeats, torch_python):
    """PyTorch eager on one thread: here, or in `torch_python`; None if absent."""
    if torch is not None:
        torch.set_num_threads(1)
        make = dict((p[0], p[3]) for p in PROGRAMS)[prog]
        return median_time(make(1), repeats)
    if not torch_python:
        return None
    r = subprocess.run([torch_python, os.path.abspath(__file__), "--torch-only", prog, "--repeats", str(repeats)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"PyTorch timing failed in {torch_python}:\n{r.stderr}")
    return float(r.stdout.split()[-1])


def math_table(a, rng):
    """Softmax and GELU backward, 1 thread: the math bindings vs NumPy and PyTorch."""
    modes = ("vector", "scalar", "libm")
    rows = ["| program | stax, vector fast path (ms) | stax, scalar fast path (ms) | stax, host libm (ms) | NumPy (ms) | "
            "PyTorch eager (ms) | NumPy / stax vector | PyTorch / stax vector | bits, vector binding |",
            "|---|---|---|---|---|---|---|---|---|"]
    for prog, transform, make_numpy, _ in MATH_PROGRAMS:
        f, inputs = make_numpy(rng)
        with tempfile.TemporaryDirectory() as d:
            flags = write_inputs(inputs, d)
            ms = {m: stax_bench(a.stax, prog, transform, 1, a.repeats, m, flags) for m in modes}
        np_ms = median_time(f, a.repeats) if f else None
        t_ms = torch_ms(prog, a.repeats, a.torch_python)
        vec = ms["vector"]["total_ms"]
        name = prog + (f" (`{transform}`)" if transform else "")
        rows.append(f"| {name} | {vec:.1f} | {ms['scalar']['total_ms']:.1f} | {ms['libm']['total_ms']:.1f} | "
                    + (f"{np_ms:.1f} | " if np_ms else "n/a (no erf: run scripts/setup.sh) | ")
                    + (f"{t_ms:.1f} | " if t_ms else "torch absent | ")
                    + (f"{np_ms / vec:.2f}x | " if np_ms else "n/a | ")
                    + (f"{t_ms / vec:.2f}x | " if t_ms else "n/a | ")
                    + f"{ms['vector']['bits']} |")
        print(rows[-1], flush=True)
    return "\n".join(rows) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stax", default=os.path.join(HERE, "..", "build", "cli", "stax"))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out")
    ap.add_argument("--math", action="store_true", help="the transcendental table")
    ap.add_argument("--torch-python", help="a python with torch, for the PyTorch column")
    ap.add_argument("--torch-only", help=argparse.SUPPRESS)  # internal: time one PyTorch program, print ms
    a = ap.parse_args()
    if a.torch_only:
        print(torch_ms(a.torch_only, a.repeats, None))
        return
    rng = np.random.default_rng(1)
    if a.math:
        text = math_table(a, rng)
        print()
        print(text)
        if a.out:
            with open(a.out, "w") as fh:
                fh.write(text)
        return
    tcol = " PyTorch eager, 1 / 2 threads (ms) |" if torch else ""
    rows = ["| program | stax 1 thread (ms) | stax 2 threads (ms) | NumPy (ms) | NumPy / stax (1 thread) |" + tcol +
            " main kernel vs copy, 1 / 2 threads | slowest JIT compile (ms) | bits |",
            "|---|---|---|---|---|" + ("---|" if torch else "") + "---|---|---|"]
    for prog, transform, make_numpy, make_torch in PROGRAMS:
        f, inputs = make_numpy(rng)
        with tempfile.TemporaryDirectory() as d:
            flags = write_inputs(inputs, d)
            one = stax_bench(a.stax, prog, transform, 1, a.repeats, inputs=flags)
            two = stax_bench(a.stax, prog, transform, 2, a.repeats, inputs=flags)
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
