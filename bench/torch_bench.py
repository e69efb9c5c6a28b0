#!/usr/bin/python3
"""Racing Inductor: the CPU backend against PyTorch eager and
`torch.compile` (Inductor) on the same inputs and the same thread count.

    /usr/bin/python3 bench/torch_bench.py [--stax build/cli/stax] [--repeats 10] [--rounds 1] [--threads 1]
        [--torch-python /work/venv-torch/bin/python] [--rows example_1_1,softmax_rows,...] [--json] [--out F]
    /usr/bin/python3 bench/torch_bench.py --table-from F.json

For each program (bench/programs/, or the transformer block graph through
`stax lower`) the inputs are drawn once with NumPy and written as .npy; both
sides read those files (bench/README.md has the figures):
- ours: `stax bench FILE --backend cpu --threads T --repeats N --json --input
  NAME=FILE.npy ...`; the figure is its `total_ms`, the median over the N
  timed runs of one whole CompiledProgram::run (every kernel of the program;
  JIT compile and the first, page-faulting run excluded; output buffers are
  the backend's own, reused). Its `bits` field says whether our output bits
  equal the interpreter's (stax bench runs the interpreter on the same inputs).
- PyTorch: in a child process of the torch python (OMP_NUM_THREADS=T,
  torch.set_num_threads(T)), eager and torch.compile of the same formula; the
  compile and 3 warm-up calls are excluded, then the median of N calls.
  glibc would mmap each 64 MiB output afresh and page-fault it on every call;
  the child runs with MALLOC_MMAP_THRESHOLD_/MALLOC_TRIM_THRESHOLD_ raised so
  that freed outputs are reused like ours (--torch-fresh-pages: glibc's default).
- --rounds R: the PyTorch child and our variants alternate R times; medians
  with their range, ratios the median of the per-round ratios.
- sanity: our output (`stax run --backend cpu --out`) against Inductor's,
  max |ours - inductor| / max |inductor|: the same function was computed.

Ratios: Inductor / ours and eager / ours (> 1: we are faster). The target:
Inductor / ours >= 1.0 on every row. Exit 2 with a message when
the torch python is missing or has no torch.
"""
import argparse, json, os, shutil, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
N2 = 4096

# (row name, program in bench/programs/, transform for `stax bench`)
ROWS = [
    ("example_1_1", "example_1_1", ""),
    ("example_1_1", "example_1_1", "interleave-lanes:w=16"),
    ("softmax_rows", "softmax_rows", ""),
    ("softmax_rows", "softmax_rows", "interleave-lanes:w=16"),
    ("softmax_rows", "softmax_rows", "interleave-lanes:w=32"),
    ("layer_norm_rows", "layer_norm_rows", ""),
    ("layer_norm_rows", "layer_norm_rows", "interleave-lanes:w=16"),
    ("layer_norm_rows", "layer_norm_rows", "interleave-lanes:w=32"),
    ("gelu_backward", "gelu_backward", ""),
    # examples/graphs/transformer_block_forward.json through `stax lower --device cpu`
    # at its own size (T=8 tokens, D=16, F=32) and scaled to T=256, D=256, F=1024.
    ("transformer_block_forward T=8 D=16 F=32", "tbf_8_16_32", ""),
    ("transformer_block_forward T=256 D=256 F=1024", "tbf_256_256_1024", ""),
    ("transformer_block forward+backward T=8 D=16 F=32", "tbb_8_16_32", ""),
    ("transformer_block forward+backward T=64 D=64 F=256", "tbb_64_64_256", ""),
    ("transformer_block forward+backward T=256 D=256 F=1024", "tbb_256_256_1024", ""),
]


def block_dims(prog):
    """tbf_T_D_F (the forward) or tbb_T_D_F (forward and backward) -> (T, D, F), else None."""
    if not prog.startswith(("tbf_", "tbb_")):
        return None
    return tuple(int(v) for v in prog.split("_")[1:])


def block_graph(dims):
    """examples/graphs/transformer_block_forward.json with its dims replaced."""
    T, D, F = dims
    with open(os.path.join(HERE, "..", "examples", "graphs", "transformer_block_forward.json")) as fh:
        g = json.load(fh)
    sub = {(8, 16): [T, D], (16,): [D], (16, 16): [D, D], (16, 32): [D, F], (32, 16): [F, D]}
    for i in g["inputs"]:
        i["shape"] = sub[tuple(i["shape"])]
    for n in g["nodes"]:
        if n["op"] == "layer_norm.default":
            n["args"][1] = [D]
    return g


def make_inputs(prog, d):
    """Draw the inputs of `prog` (seeded) into directory d; return {name: path}."""
    import numpy as np
    rng = np.random.default_rng(19)
    f32 = np.float32
    if prog == "example_1_1":
        arrs = {"primals_1": rng.standard_normal((N2, N2), dtype=f32),
                "primals_2": rng.standard_normal((N2, N2), dtype=f32)}
    elif prog == "softmax_rows":
        arrs = {"x": rng.standard_normal((N2, N2), dtype=f32)}
    elif prog == "layer_norm_rows":
        arrs = {"x": rng.standard_normal((N2, N2), dtype=f32), "w": rng.standard_normal(N2, dtype=f32),
                "b": rng.standard_normal(N2, dtype=f32)}
    elif prog == "gelu_backward":
        arrs = {"upstream": np.array(1.5, dtype=f32), "h": rng.standard_normal(1 << 24, dtype=f32)}
    elif block_dims(prog):
        # Weights scaled by 1/sqrt(fan-in) so the activations stay O(1).
        arrs = {}
        for i in block_graph(block_dims(prog))["inputs"]:
            sh = tuple(i["shape"])
            scale = 1.0 if len(sh) < 2 or i["name"] == "x" else 1.0 / np.sqrt(sh[0])
            arrs[i["name"]] = (rng.standard_normal(sh, dtype=f32) * f32(scale)).astype(f32)
        if prog.startswith("tbb_"):
            arrs["tangents_1"] = np.array(1.0, dtype=f32)  # the loss's seed: d loss / d loss
    else:
        raise ValueError(prog)
    paths = {}
    for name, a in arrs.items():
        paths[name] = os.path.join(d, name + ".npy")
        np.save(paths[name], a)
    return paths


# ---- the PyTorch side (runs in the torch python) -------------------------

def torch_fn(prog, t):
    """The same formula as bench/programs/PROG.stx, over the tensors t."""
    import torch
    if prog == "example_1_1":
        return lambda a, b: (torch.relu(a + b) * 2.0).sum(dim=1), (t["primals_1"], t["primals_2"])
    if prog == "softmax_rows":
        return lambda x: torch.softmax(x, dim=1), (t["x"],)
    if prog == "layer_norm_rows":
        return (lambda x, w, b: torch.nn.functional.layer_norm(x, (N2,), w, b, 1e-5)), (t["x"], t["w"], t["b"])
    if prog == "gelu_backward":
        def f(u, h):
            cdf = 0.5 * (1.0 + torch.erf(h * 0.70710677))
            pdf = 0.3989423 * torch.exp(-0.5 * h * h)
            return u * (cdf + h * pdf)
        return f, (t["upstream"], t["h"])
    if block_dims(prog):
        F = torch.nn.functional
        names = ["x", "ln1_w", "ln1_b", "Wq", "Wk", "Wv", "Wo", "ln2_w", "ln2_b", "W1", "W2"]
        D = block_dims(prog)[1]

        def block(x, ln1_w, ln1_b, Wq, Wk, Wv, Wo, ln2_w, ln2_b, W1, W2):
            ln1 = F.layer_norm(x, (D,), ln1_w, ln1_b, 1e-5)
            q, k, v = ln1 @ Wq, ln1 @ Wk, ln1 @ Wv
            attn = torch.softmax((q @ k.t()) * 0.25, dim=-1)
            res1 = x + (attn @ v) @ Wo
            act = F.gelu(F.layer_norm(res1, (D,), ln2_w, ln2_b, 1e-5) @ W1)
            res2 = res1 + act @ W2
            return (res2 * res2).sum()
        return block, tuple(t[n] for n in names)
    raise ValueError(prog)


def median_ms(f, args, repeats, warmup=3):
    for _ in range(warmup):
        f(*args)
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f(*args)
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return ts[len(ts) // 2] * 1e3


def torch_worker(a):
    """Child: time eager and torch.compile; compare with our output; print JSON."""
    import numpy as np
    import torch
    torch.set_num_threads(a.threads)
    spec = json.loads(a.torch_worker)
    t = {n: torch.from_numpy(np.load(p)) for n, p in spec["inputs"].items()}
    f, args = torch_fn(spec["prog"], t)
    out = {"torch": torch.__version__, "threads": torch.get_num_threads()}
    if spec["prog"].startswith("tbb_"):
        # Forward and backward: the loss and its gradients with respect to
        # every input, as the joint graph of `stax grad` computes them; the
        # compiled side is torch.compile's forward and AOTAutograd backward.
        args = tuple(x.clone().requires_grad_() for x in args)
        seed = t["tangents_1"]

        def step(fb):
            return lambda *xs: torch.autograd.grad(fb(*xs), xs, grad_outputs=seed)
        out["eager_ms"] = median_ms(step(f), args, a.repeats)
        g = step(torch.compile(f))
        t0 = time.perf_counter()
        y = g(*args)[0].detach()
        out["compile_s"] = time.perf_counter() - t0
        out["inductor_ms"] = median_ms(g, args, a.repeats)
    else:
        with torch.no_grad():
            out["eager_ms"] = median_ms(f, args, a.repeats)
            g = torch.compile(f)
            t0 = time.perf_counter()
            y = g(*args)
            out["compile_s"] = time.perf_counter() - t0
            out["inductor_ms"] = median_ms(g, args, a.repeats)
    if spec.get("ours"):
        ours = np.load(spec["ours"]).astype(np.float64)
        ref = y.double().numpy()
        scale = float(np.max(np.abs(ref))) or 1.0
        out["rel_diff_vs_inductor"] = float(np.max(np.abs(ours - ref))) / scale
    print(json.dumps(out))


# ---- the driver -----------------------------------------------------------

def stax_json(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    # stax bench exits 1 when the bits differ from the interpreter's: still a row.
    if r.returncode not in (0, 1):
        sys.exit(f"stax failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    return json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}


def lower_block(stax, prog, d):
    """Write the block graph of `prog` (for tbb_, the joint graph of `stax
    grad`: the loss and every input's gradient) and `stax lower` it to
    d/block.stx."""
    gpath, stx = os.path.join(d, "block.json"), os.path.join(d, "block.stx")
    with open(gpath, "w") as fh:
        json.dump(block_graph(block_dims(prog)), fh)
    if prog.startswith("tbb_"):
        r = subprocess.run([stax, "grad", gpath, "--json"], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"stax grad failed ({r.returncode}) on {gpath}:\n{r.stderr}")
        gpath = os.path.join(d, "joint.json")
        with open(gpath, "w") as fh:
            fh.write(r.stdout)
    r = subprocess.run([stax, "lower", gpath, "--device", "cpu"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"stax lower failed ({r.returncode}) on {gpath}:\n{r.stderr}")
    with open(stx, "w") as fh:
        fh.write(r.stdout)
    return stx


def check_torch_python(py):
    if not py:
        for c in (os.environ.get("STAX_TORCH_PYTHON"), sys.executable):
            if c and subprocess.run([c, "-c", "import torch"], capture_output=True).returncode == 0:
                return c
        print("error: no python with torch: pass --torch-python PY (e.g. a venv with torch 2.x, see bench/README.md) "
              "or set STAX_TORCH_PYTHON", file=sys.stderr)
        sys.exit(2)
    if not (os.path.isfile(py) and os.access(py, os.X_OK)):
        print(f"error: --torch-python {py}: no such executable", file=sys.stderr)
        sys.exit(2)
    r = subprocess.run([py, "-c", "import torch, numpy; print(torch.__version__)"], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"error: --torch-python {py} cannot import torch and numpy:\n{r.stderr.strip()}", file=sys.stderr)
        sys.exit(2)
    return py


def med(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def ms(x):
    return f"{x:.2f}" if x >= 1 else f"{x:.3g}"


def ratio(x):
    return f"{x:.2f}x" if x >= 0.1 else f"{x:.2g}x"


def markdown(results, threads, repeats, rounds):
    """The Markdown table of the result rows."""
    lines = [f"| program | ours (ms) | Inductor (ms) | eager (ms) | Inductor / ours | rounds ahead | eager / ours | "
             f"our bits vs interpreter | max rel. diff vs Inductor |", "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        nm = r["row"] + (f" (`{r['transform']}`)" if r["transform"] else "")
        bits = "identical" if r["bits"].startswith("identical") else r["bits"]
        rd = f"{r['rel_diff_vs_inductor']:.1e}" if r["rel_diff_vs_inductor"] is not None else "n/a"
        def cell(k):
            v = r[k + "_all"]
            return ms(r[k]) + (f" ({ms(min(v))}–{ms(max(v))})" if len(v) > 1 else "")
        # The rounds in which ours was faster than Inductor's run of the same round.
        ahead = sum(o < i for i, o in zip(r["inductor_ms_all"], r["ours_ms_all"]))
        won = f"{ahead}/{len(r['ours_ms_all'])}"
        lines.append(f"| {nm} | {cell('ours_ms')} | {cell('inductor_ms')} | {cell('eager_ms')} | "
                     f"{ratio(r['inductor_over_ours'])} | {won} | {ratio(r['eager_over_ours'])} | {bits} | {rd} |")
    text = (f"{threads} thread(s), median of {repeats} runs per round, {rounds} round(s) (median, min–max; "
             f"ratios: median of the per-round ratios; rounds ahead: rounds in which ours beat Inductor); "
             f"torch {results[0]['torch'] if results else '?'}\n\n"
            + "\n".join(lines) + "\n")
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stax", default=os.path.join(HERE, "..", "build", "cli", "stax"))
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=1, help="alternate ours and PyTorch this many times per program")
    ap.add_argument("--torch-python", help="a python with torch (default: $STAX_TORCH_PYTHON, else this one)")
    ap.add_argument("--chain-bytes", type=int,
                    help="our side: stax bench --chain-bytes (0: no kernel chains; default: stax's)")
    ap.add_argument("--rows", help="comma-separated programs (default: all)")
    ap.add_argument("--torch-fresh-pages", action="store_true", help="glibc's default malloc in the torch child")
    ap.add_argument("--json", action="store_true", help="one JSON document instead of the Markdown table")
    ap.add_argument("--out", help="also write the table (or JSON) to this file")
    ap.add_argument("--table-from", help="print the Markdown table of a --json result file and exit")
    ap.add_argument("--torch-worker", help=argparse.SUPPRESS)  # internal: the PyTorch child
    a = ap.parse_args()
    if a.torch_worker:
        torch_worker(a)
        return
    if a.table_from:
        with open(a.table_from) as fh:
            j = json.load(fh)
        print(markdown(j["rows"], j["threads"], j["repeats"], j.get("rounds", 1)), end="")
        return
    if a.repeats < 1 or a.threads < 1 or a.rounds < 1:
        print("error: --repeats, --threads and --rounds must be at least 1", file=sys.stderr)
        sys.exit(2)
    py = check_torch_python(a.torch_python)
    if not os.access(a.stax, os.X_OK):
        print(f"error: {a.stax}: no stax binary (build it: ninja -C build stax, or pass --stax)", file=sys.stderr)
        sys.exit(2)
    try:
        import numpy  # noqa: F401
    except ImportError:
        print("error: this python has no numpy (needed to write the inputs)", file=sys.stderr)
        sys.exit(2)
    want = set(a.rows.split(",")) if a.rows else None
    rows = [r for r in ROWS if want is None or r[1] in want]
    if want and not rows:
        print(f"error: --rows: none of {sorted(want)} in {sorted(set(r[1] for r in ROWS))}", file=sys.stderr)
        sys.exit(2)
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    if not a.torch_fresh_pages:
        env.update(MALLOC_MMAP_THRESHOLD_=str(1 << 30), MALLOC_TRIM_THRESHOLD_=str(1 << 31))
    tmp = tempfile.mkdtemp(prefix="stax_torch_bench_")
    results = []
    try:
        for prog in dict.fromkeys(r[1] for r in rows):
            variants = [(name, transform) for name, pr, transform in rows if pr == prog]
            d = os.path.join(tmp, prog)
            os.makedirs(d, exist_ok=True)
            stx = lower_block(a.stax, prog, d) if block_dims(prog) else \
                os.path.join(HERE, "programs", prog + ".stx")
            inputs = make_inputs(prog, d)
            flags = [x for n, p in inputs.items() for x in ("--input", f"{n}={p}")]
            # Our output for the sanity check (the program has one output).
            r = subprocess.run([a.stax, "run", stx, "--backend", "cpu", "--out", os.path.join(d, "out")] + flags,
                               capture_output=True, text=True)
            outs = [f for f in os.listdir(os.path.join(d, "out")) if f.endswith(".npy")] if r.returncode == 0 else []
            ours_out = os.path.join(d, "out", outs[0]) if len(outs) == 1 else None
            # Rounds: the PyTorch child, then each of our variants, R times in turn,
            # so that each round's ratio compares figures taken minutes apart at most.
            trs, bench = [], {t: [] for _, t in variants}
            for rnd in range(a.rounds):
                spec = json.dumps({"prog": prog, "inputs": inputs, "ours": ours_out if rnd == 0 else None})
                r = subprocess.run([py, os.path.abspath(__file__), "--torch-worker", spec, "--repeats", str(a.repeats),
                                    "--threads", str(a.threads)], capture_output=True, text=True, env=env)
                if r.returncode != 0:
                    sys.exit(f"PyTorch side failed for {prog} in {py}:\n{r.stderr[-4000:]}")
                trs.append(json.loads(r.stdout.strip().splitlines()[-1]))
                for name, transform in variants:
                    cmd = [a.stax, "bench", stx, "--backend", "cpu", "--threads", str(a.threads), "--repeats",
                           str(a.repeats), "--json"] + flags + (["--transform", transform] if transform else []) + (
                        ["--chain-bytes", str(a.chain_bytes)] if a.chain_bytes is not None else [])
                    bench[transform].append(stax_json(cmd))
                    if not a.json:
                        print(f"round {rnd + 1}: {name} {transform or '(plain)'}: ours "
                              f"{bench[transform][-1]['total_ms']:.2f} ms, Inductor {trs[-1]['inductor_ms']:.2f} ms, "
                              f"eager {trs[-1]['eager_ms']:.2f} ms", file=sys.stderr, flush=True)
            ind = [t["inductor_ms"] for t in trs]
            eag = [t["eager_ms"] for t in trs]
            for name, transform in variants:
                ours = [b["total_ms"] for b in bench[transform]]
                bits = [b.get("bits", "?") for b in bench[transform]]
                results.append({
                    "row": name, "transform": transform, "rounds": a.rounds,
                    "ours_ms": med(ours), "inductor_ms": med(ind), "eager_ms": med(eag),
                    "ours_ms_all": ours, "inductor_ms_all": ind, "eager_ms_all": eag,
                    # the median of the per-round ratios
                    "inductor_over_ours": med([i / o for i, o in zip(ind, ours)]),
                    "eager_over_ours": med([e / o for e, o in zip(eag, ours)]),
                    "bits": next((b for b in bits if not b.startswith("identical")), bits[0]),
                    "kernels": len(bench[transform][0].get("kernels", [])),
                    "inductor_compile_s": trs[0]["compile_s"],
                    "rel_diff_vs_inductor": trs[0].get("rel_diff_vs_inductor"), "torch": trs[0]["torch"]})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if a.json:
        text = json.dumps({"threads": a.threads, "repeats": a.repeats, "rounds": a.rounds,
                           "torch_fresh_pages": a.torch_fresh_pages,
                           "rows": results}, indent=2) + "\n"
    else:
        text = markdown(results, a.threads, a.repeats, a.rounds)
    print(text, end="")
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
