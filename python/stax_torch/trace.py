"""`python -m stax_torch trace DIR [--graph FILE] [--no-compile]`: run one of
our graph JSON files in PyTorch, node by node, for `stax torch-check`.

DIR holds the graph (default DIR/graph.json) and one NAME.npy per graph input
(what `export` writes). The trace writes

- DIR/eager/NODE.npy: PyTorch eager's output of every node, each node run by
  the dispatcher (`torch.ops.aten.<op>`) on PyTorch's own outputs of the
  nodes before it, so that `stax torch-check` can apply our reference op to
  exactly the inputs PyTorch's op saw;
- DIR/compiled/OUTPUT.npy: the graph's outputs from `torch.compile` (Inductor)
  of a function that calls the same aten ops on the graph inputs;
Another graph file than DIR/graph.json (`--graph DIR/joint.json`) writes to
DIR/joint-eager/, DIR/joint-compiled/ and DIR/joint-trace.json instead.

- DIR/trace.json: the torch version, the CPU capability, the thread count
  (one: PyTorch's sums split per thread above 32,768 elements), the nodes
  whose eager output is not contiguous (a view's strides: the op after it
  reads memory in another order) and the files.

Nothing here judges: the checks are C++ (`stax torch-check`, peers/).
"""

import json
import os
import platform

import numpy as np

DTYPES = {"f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16",
          "i32": "int32", "i64": "int64", "bool": "bool"}


class TraceError(Exception):
    pass


def torch_dtype(name):
    import torch

    if name not in DTYPES:
        raise TraceError("unknown dtype %r" % name)
    return getattr(torch, DTYPES[name])


def resolve(v, env):
    """A JSON argument -> a Python value: a string names a tensor (node or input)."""
    if isinstance(v, str):
        if v not in env:
            raise TraceError("reference to unknown tensor %r" % v)
        return env[v]
    if isinstance(v, list):
        return [resolve(x, env) for x in v]
    return v


def kwarg(k, v):
    if k == "dtype" and isinstance(v, str):
        return torch_dtype(v)
    return v


def aten_op(op):
    import torch

    base, _, overload = op.partition(".")
    packet = getattr(torch.ops.aten, base, None)
    fn = getattr(packet, overload or "default", None) if packet is not None else None
    if fn is None:
        raise TraceError("no PyTorch operator aten.%s" % op)
    return fn


def run_nodes(graph, env, on_node=None):
    """Runs the graph's nodes in order on `env` (name -> tensor); returns env."""
    for n in graph["nodes"]:
        fn = aten_op(n["op"])
        args = resolve(n.get("args", []), env)
        kwargs = {k: kwarg(k, v) for k, v in n.get("kwargs", {}).items()}
        y = fn(*args, **kwargs)
        if not hasattr(y, "dtype"):
            raise TraceError("node %s (%s) did not return one tensor" % (n["name"], n["op"]))
        env[n["name"]] = y
        if on_node:
            on_node(n["name"], y)
    return env


def to_numpy(t):
    import torch

    if t.dtype == torch.bfloat16:  # NumPy has no bfloat16: the bits as uint16 are not .npy-typed
        raise TraceError("bfloat16 outputs are not supported by the trace (.npy has no bf16)")
    return t.detach().contiguous().cpu().numpy()


def trace_batch(dirs, compile_=True, threads=1):
    """Traces each folder; PyTorch's own error on one (an op it refuses, a
    compile failure) goes to DIR/error.txt and the batch goes on. Returns the
    number of folders that failed."""
    import torch

    failed = 0
    for d in dirs:
        err = os.path.join(d, "error.txt")
        if os.path.exists(err):
            os.remove(err)
        try:
            trace(d, None, compile_, threads)
        except Exception as e:  # noqa: BLE001 -- any PyTorch error is data for the campaign
            failed += 1
            msg = ("%s: %s" % (type(e).__name__, e)).strip().splitlines()
            with open(err, "w") as f:
                f.write((msg[0] if msg else type(e).__name__)[:500] + "\n")
        if compile_:
            torch._dynamo.reset()
    return failed


def trace(d, graph_file=None, compile_=True, threads=1):
    import torch

    # The thread count changes how ATen splits a sum: trace.json records it
    # and `stax torch-check` models that split (the torch-sum transform).
    torch.set_num_threads(threads)
    if torch.get_num_threads() != threads:
        raise TraceError("torch.set_num_threads(%d) left %d threads" % (threads, torch.get_num_threads()))
    graph_file = graph_file or os.path.join(d, "graph.json")
    # graph.json -> eager/, compiled/, trace.json; joint.json -> joint-eager/, ...
    stem = os.path.splitext(os.path.basename(graph_file))[0]
    prefix = "" if stem == "graph" else stem + "-"
    with open(graph_file) as f:
        graph = json.load(f)
    inputs = {}
    for i in graph["inputs"]:
        path = os.path.join(d, i["name"] + ".npy")
        if not os.path.isfile(path):
            raise TraceError("%s: missing input file for graph input %s" % (path, i["name"]))
        inputs[i["name"]] = torch.from_numpy(np.load(path))
    files = {"eager": [], "compiled": []}
    noncontiguous = []
    os.makedirs(os.path.join(d, prefix + "eager"), exist_ok=True)

    def save_eager(name, y):
        np.save(os.path.join(d, prefix + "eager", name + ".npy"), to_numpy(y))
        files["eager"].append(name)
        if not y.is_contiguous():  # a view's strides: the next op reads it in another order
            noncontiguous.append(name)

    with torch.no_grad():
        run_nodes(graph, dict(inputs), save_eager)
        if compile_:
            names = [i["name"] for i in graph["inputs"]]

            def fn(*a):
                env = run_nodes(graph, dict(zip(names, a)))
                return tuple(env[o] for o in graph["outputs"])

            compiled = torch.compile(fn, backend="inductor", fullgraph=True)
            outs = compiled(*[inputs[n] for n in names])
            os.makedirs(os.path.join(d, prefix + "compiled"), exist_ok=True)
            for name, y in zip(graph["outputs"], outs):
                np.save(os.path.join(d, prefix + "compiled", name + ".npy"), to_numpy(y))
                files["compiled"].append(name)
    meta = {
        "generator": "python -m stax_torch trace",
        "graph": os.path.basename(graph_file),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "threads": torch.get_num_threads(),
        "noncontiguous": noncontiguous,
        "files": files,
    }
    with open(os.path.join(d, prefix + "trace.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")
    return meta
