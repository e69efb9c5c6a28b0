"""ctest torch_export_live (through export_live.sh): python -m stax_torch export.

1. Every committed export (examples/torch/exported/NAME) is reproduced by
   exporting examples/torch/NAME.py again, names aside (goldens; Example 1.1's
   is Listing 5.1: the C++ test compiler_torch_export_test compares it with
   examples/graphs/example_1_1.json).
2. Unsupported operators: a script with torch.cumsum and torch.sort
   exits 2 with both operators listed and writes nothing.
3. `stax lower` + `stax run` on the exported graphs with the exported .npy
   inputs, compared with PyTorch eager: bit-identical elements, the largest
   difference in ulps and the normwise relative error are printed; the error
   must stay below 1e-5 (the op order differs: sums, mm, layer norm); a
   comparator self-check makes sure a wrong result fails.
4. Example 5.1's backward: `stax grad` of the exported graph, lowered and run,
   against torch.autograd (the same normwise bound).
Usage: export_test.py STAX_BINARY
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = ["example_1_1", "example_5_1", "mlp", "transformer_block", "cross_entropy"]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def export(script, out):
    r = subprocess.run([sys.executable, "-m", "stax_torch", "export", script, "--out", out],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=os.path.join(SRC, "python")))
    return r.returncode, r.stdout + r.stderr


def canonical(g):
    """The graph with inputs and nodes renamed by position; `source` dropped."""
    rn = {x["name"]: "i%d" % k for k, x in enumerate(g["inputs"])}
    rn.update({x["name"]: "n%d" % k for k, x in enumerate(g["nodes"])})

    def ren(a):
        if isinstance(a, str):
            return rn.get(a, a)
        if isinstance(a, list):
            return [ren(x) for x in a]
        if isinstance(a, dict):
            return {k: ren(v) for k, v in a.items()}
        return a

    out = {k: v for k, v in g.items() if k != "source"}
    out["inputs"] = [dict(x, name=rn[x["name"]]) for x in g["inputs"]]
    out["nodes"] = [dict(x, name=rn[x["name"]], args=ren(x["args"])) for x in g["nodes"]]
    for k in ("outputs", "primals", "tangents", "forward_outputs"):
        if k in g:
            out[k] = ren(g[k])
    if "grads" in g:
        out["grads"] = {rn[k]: rn[v] for k, v in g["grads"].items()}
    return out


def ulps(a, b):
    """|a - b| in units of the float32 grid (order-preserving integer map)."""
    def key(x):
        i = x.astype(np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return np.abs(key(a) - key(b))


def close(got, want, bound):
    """Normwise: max |got - want| <= bound * max |want| (ulps mislead near 0).
    Returns (ok, max ulps, normwise relative error)."""
    if got.shape != want.shape or not np.all(np.isfinite(got)):
        return False, -1, float("inf")
    u = int(ulps(got, want).max())
    scale = float(np.max(np.abs(want.astype(np.float64))))
    rel = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) / (scale or 1.0)
    return rel <= bound, u, rel


def main(stax):
    tmp = tempfile.mkdtemp(prefix="stax_export_live.")
    # 1. goldens
    for m in MODELS:
        out = os.path.join(tmp, m)
        rc, text = export(os.path.join(SRC, "examples/torch", m + ".py"), out)
        check(rc == 0, "%s exports (%s)" % (m, text.strip().splitlines()[-1] if text.strip() else ""))
        for f in ("graph.json", "joint.json"):
            golden = os.path.join(SRC, "examples/torch/exported", m, f)
            if os.path.exists(golden):
                same = os.path.exists(os.path.join(out, f)) and \
                    canonical(json.load(open(os.path.join(out, f)))) == canonical(json.load(open(golden)))
                check(same, "%s/%s equals the committed golden (names aside)" % (m, f))
    # Wrong case: a changed golden must not compare equal.
    g = json.load(open(os.path.join(SRC, "examples/torch/exported/example_1_1/graph.json")))
    bad = json.loads(json.dumps(g))
    bad["nodes"][2]["args"][1] = 3
    check(canonical(bad) != canonical(g), "comparator: mul by 3 instead of 2 differs from the golden")

    # 2. unsupported operators
    script = os.path.join(tmp, "cumsum_sort.py")
    with open(script, "w") as f:
        f.write("import torch\n\n\ndef model(x):\n    return torch.cumsum(x, 0) + torch.sort(x, dim=-1).values\n\n\n"
                "example_inputs = (torch.ones(4, 5),)\n")
    rc, text = export(script, os.path.join(tmp, "cumsum_out"))
    print(text.strip())
    check(rc == 2 and "aten.cumsum.default x1" in text and "aten.sort" in text,
          "cumsum + sort: exit 2 with both operators listed (got %d)" % rc)
    check(not os.path.exists(os.path.join(tmp, "cumsum_out", "graph.json")), "cumsum + sort: no graph written")

    # 3. stax lower + stax run vs PyTorch eager
    # A loose normwise bound (float32: 2^-23 = 1.2e-7); the printed figures are
    # the measurement. Orders differ (mm, sums, layer norm), so bits may differ.
    bound = 1e-5
    for m in MODELS:
        d = os.path.join(tmp, m)
        stx = os.path.join(d, "graph.stx")
        with open(stx, "w") as f:
            r = subprocess.run([stax, "lower", os.path.join(d, "graph.json")], stdout=f, stderr=subprocess.PIPE, text=True)
        check(r.returncode == 0, "%s: stax lower accepts the graph %s" % (m, r.stderr.strip()))
        if r.returncode:
            continue
        g = json.load(open(os.path.join(d, "graph.json")))
        args = [stax, "run", stx, "--out", os.path.join(d, "run")]
        for i in g["inputs"]:
            args += ["--input", "%s=%s" % (i["name"], os.path.join(d, i["name"] + ".npy"))]
        r = subprocess.run(args, capture_output=True, text=True)
        check(r.returncode == 0, "%s: stax run %s" % (m, r.stderr.strip()[-300:]))
        if r.returncode:
            continue
        got = np.load(os.path.join(d, "run", g["outputs"][0] + ".npy"))
        want = np.load(os.path.join(d, "expected.npy"))
        ok, u, rel = close(got, want, bound)
        bits = int(np.sum(got.view(np.uint32) == want.astype(np.float32).view(np.uint32))) if got.shape == want.shape else -1
        check(ok, "%s: stax run vs torch eager: %d of %d elements bit-identical, max %d ulps, "
              "normwise relative error %.3g (bound %g)" % (m, bits, want.size, u, rel, bound))
        if m == "example_1_1":
            wrong = want * np.float32(1.001)
            check(not close(got, wrong, bound)[0], "comparator: a result scaled by 1.001 is rejected")
    # 4. Example 5.1's backward: `stax grad` on the exported forward graph,
    # lowered and run, against torch.autograd on the same inputs.
    import torch

    d = os.path.join(tmp, "example_5_1")
    r = subprocess.run([stax, "grad", os.path.join(d, "graph.json"), "--json"], capture_output=True, text=True)
    check(r.returncode == 0, "example_5_1: stax grad %s" % r.stderr.strip()[-300:])
    if r.returncode == 0:
        joint = json.loads(r.stdout)
        with open(os.path.join(d, "joint_grad.json"), "w") as f:
            json.dump(joint, f)
        with open(os.path.join(d, "joint_grad.stx"), "w") as f:
            r = subprocess.run([stax, "lower", os.path.join(d, "joint_grad.json")], stdout=f, stderr=subprocess.PIPE, text=True)
        np.save(os.path.join(d, "tangents_1.npy"), np.float32(1.0).reshape(()))
        args = [stax, "run", os.path.join(d, "joint_grad.stx"), "--out", os.path.join(d, "grad")]
        for i in joint["inputs"]:
            args += ["--input", "%s=%s" % (i["name"], os.path.join(d, i["name"] + ".npy"))]
        r = subprocess.run(args, capture_output=True, text=True)
        check(r.returncode == 0, "example_5_1: stax lower + run of the joint graph %s" % r.stderr.strip()[-300:])
        w = torch.from_numpy(np.load(os.path.join(d, "p_w.npy"))).requires_grad_()
        x = torch.from_numpy(np.load(os.path.join(d, "x.npy"))).requires_grad_()
        torch.nn.functional.gelu(x @ w).sum().backward()
        for name, t in (("p_w", w.grad), ("x", x.grad)):
            got = np.load(os.path.join(d, "grad", joint["grads"][name] + ".npy"))
            ok, u, rel = close(got, t.numpy(), bound)
            bits = int(np.sum(got.view(np.uint32) == t.numpy().view(np.uint32)))
            check(ok, "example_5_1: d/d%s by stax grad vs torch autograd: %d of %d bit-identical, max %d ulps, "
                  "normwise relative error %.3g" % (name, bits, got.size, u, rel))
    shutil.rmtree(tmp, ignore_errors=True)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
