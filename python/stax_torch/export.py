"""`python -m stax_torch export SCRIPT.py --out DIR`: torch.export to our graph JSON.

SCRIPT defines `model` (an nn.Module or a function) and `example_inputs` (a
tuple of tensors); optionally `backward = True` (the output must be a scalar):
the joint graph (forward and the gradient of the output with respect to every
parameter and floating input, as aot_autograd's joint graph, Listing 5.2) is
written too, as DIR/joint.json.

torch.export.export(...).run_decompositions() gives core-aten nodes; each
becomes a node whose `op` is the aten overload (`add.Tensor`) and whose `aten`
field is the full target (`aten.add.Tensor`). Parameters, buffers and example
inputs are written as DIR/NAME.npy. Any node whose overload the compiler does
not accept (SUPPORTED, the compiler's op_signatures) makes one error listing
every such overload with its count (exit 2); nothing is dropped.
"""

import collections
import inspect
import json
import os
import runpy
import sys

import numpy as np

# compiler/decompose.cpp, op_signatures(): every overload `stax lower` accepts.
SUPPORTED = frozenset("""
add.Tensor add.Scalar sub.Tensor sub.Scalar mul.Tensor mul.Scalar div.Tensor div.Scalar
pow.Tensor_Scalar pow.Tensor_Tensor remainder.Tensor remainder.Scalar floor_divide.default
maximum.default minimum.default eq.Tensor eq.Scalar ne.Tensor ne.Scalar lt.Tensor lt.Scalar
le.Tensor le.Scalar gt.Tensor gt.Scalar ge.Tensor ge.Scalar mm.default bmm.default
neg.default abs.default relu.default sigmoid.default tanh.default exp.default log.default
sqrt.default rsqrt.default erf.default log1p.default log2.default log10.default expm1.default
sin.default cos.default floor.default clone.default alias.default contiguous.default
_to_copy.default to.dtype t.default sum.default prod.default where.self sum.dim_IntList
amax.default amin.default prod.dim_int argmax.default argmin.default transpose.int
permute.default expand.default view.default reshape.default _unsafe_view.default
unsqueeze.default squeeze.dim squeeze.dims index.Tensor full.default squeeze.default
slice.Tensor select.int cat.default arange.default arange.start arange.start_step
zeros.default ones.default mean.dim mean.default softmax.int log_softmax.int
_softmax.default _log_softmax.default layer_norm.default gelu.default
gelu_backward.default matmul.default addmm.default scalar_tensor.default gather.default
""".split())

# `X.Tensor(t, number)`: torch.export keeps the Tensor overload with a Python
# number as the second operand; the dispatcher's scalar overload is `X.Scalar`
# (Listing 5.1 has mul.Scalar). Renamed when the .Scalar overload exists.
SCALAR_TWIN = {"add", "sub", "mul", "div", "remainder", "eq", "ne", "lt", "le", "gt", "ge"}
# Constructor kwargs with no meaning in our format (one CPU device, strided).
DROP_KWARGS = {"device", "layout", "pin_memory", "memory_format", "non_blocking"}


class ExportError(Exception):
    pass


# Words of the core language (semantics/parser.cpp, is_keyword, and the dtype
# names): `stax lower` prints graph names as .stx bindings, so a node or input
# named `input` or `permute` would print a program that does not parse.
STX_KEYWORDS = frozenset("""
input let output in map view red iota full fn load cast rand permute slice expand reshape
unsqueeze squeeze gather nan inf true false f32 f64 f16 bf16 i32 i64 bool
""".split())


class Namer:
    """Unique names that are not .stx keywords: `permute` -> `permute_0` (torch
    names the next ones permute_1, ...)."""

    def __init__(self):
        self.used = set()

    def __call__(self, name):
        s, k = name, 0
        while s in self.used or s in STX_KEYWORDS:
            s = "%s_%d" % (name, k)
            k += 1
        self.used.add(s)
        return s


def dtype_name(dt):
    import torch

    names = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16", torch.bfloat16: "bf16",
             torch.int32: "i32", torch.int64: "i64", torch.bool: "bool"}
    if dt not in names:
        raise ExportError("dtype %s has no name in docs/graph-format.md" % dt)
    return names[dt]


def overload_name(target):
    """aten.add.Tensor -> ("add.Tensor", "aten.add.Tensor")."""
    schema = target._schema
    base = schema.name.split("::")[-1]
    ov = schema.overload_name or "default"
    return "%s.%s" % (base, ov), "aten.%s.%s" % (base, ov)


def literal(v, name_of, where):
    import torch
    import torch.fx

    if isinstance(v, torch.fx.Node):
        return name_of(v)
    if isinstance(v, (list, tuple)):
        return [literal(x, name_of, where) for x in v]
    if isinstance(v, bool) or v is None or isinstance(v, int):
        return v
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            raise ExportError("%s: non-finite constant %r has no JSON form" % (where, v))
        return v
    if isinstance(v, torch.dtype):
        return dtype_name(v)
    if isinstance(v, str):
        return v
    raise ExportError("%s: argument %r (%s) has no form in our graph format" % (where, v, type(v).__name__))


def with_defaults(target, args, kwargs):
    """Trailing positional defaults and non-None kwarg-only defaults from the schema
    (Listing 5.1: sum.dim_IntList(mul, [-1], False), add.Tensor alpha=1)."""
    args, kwargs = list(args), dict(kwargs)
    pos = [a for a in target._schema.arguments if not a.kwarg_only]
    for a in pos[len(args):]:
        if not a.has_default_value():
            break
        args.append(a.default_value)
    for a in target._schema.arguments:
        if a.kwarg_only and a.name not in kwargs and a.has_default_value() and a.default_value is not None:
            kwargs[a.name] = a.default_value
    return args, kwargs


def convert(gm, input_names, outputs_of, namer):
    """An fx graph of core-aten nodes -> (nodes, unsupported Counter).
    input_names: placeholder node -> our input name; namer: a Namer that has
    seen the input names."""
    import operator

    import torch

    names = dict(input_names)
    users_getitem = collections.defaultdict(dict)  # multi-output node -> {index: getitem node}
    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target is operator.getitem:
            users_getitem[n.args[0]][n.args[1]] = n
    nodes, unsupported = [], collections.Counter()

    def name_of(n):
        return names.get(n, n.name)  # an unsupported producer: reported, nothing written

    for n in gm.graph.nodes:
        if n.op in ("placeholder", "output"):
            continue
        if n.op != "call_function":
            unsupported["%s %s" % (n.op, n.target)] += 1
            continue
        if n.target is operator.getitem:
            continue  # resolved with its producer
        if not isinstance(n.target, torch._ops.OpOverload):
            unsupported[str(n.target)] += 1
            continue
        op, aten = overload_name(n.target)
        args, kwargs = with_defaults(n.target, n.args, n.kwargs)
        if op == "native_layer_norm.default":
            # (out, mean, rstd): only `out` used -> layer_norm.default, which our
            # decomposition table expands (compiler/decompose.cpp).
            gi = users_getitem.get(n, {})
            used = sorted(i for i, g in gi.items() if g.users)
            if used == [0] and not [u for u in n.users if u.target is not operator.getitem]:
                op = "layer_norm.default"
            else:
                unsupported["%s (outputs %s used)" % (aten, used)] += 1
                continue
        elif users_getitem.get(n):
            unsupported["%s (tuple output)" % aten] += 1
            continue
        base, ov = op.split(".", 1)
        if ov == "Tensor" and base in SCALAR_TWIN and len(args) > 1 and not isinstance(args[1], torch.fx.Node):
            op = base + ".Scalar"
        if op not in SUPPORTED:
            unsupported[aten] += 1
            continue
        names[n] = namer(n.name)
        if op == "layer_norm.default":
            names[users_getitem[n][0]] = names[n]
        where = "node '%s' (%s)" % (n.name, aten)
        node = {"name": names[n], "op": op, "args": literal(args, name_of, where)}
        kw = {k: literal(v, name_of, where) for k, v in kwargs.items() if k not in DROP_KWARGS}
        if kw:
            node["kwargs"] = kw
        node["aten"] = aten
        nodes.append(node)
    outs = []
    if not unsupported:
        for o in outputs_of(gm):
            if not isinstance(o, torch.fx.Node) or o not in names:
                raise ExportError("output %r is not a tensor node" % (o,))
            outs.append(names[o])
    return nodes, outs, unsupported


def tensor_input(name, t):
    return {"name": name, "dtype": dtype_name(t.dtype), "shape": list(t.shape)}


def fx_outputs(gm):
    out = [n for n in gm.graph.nodes if n.op == "output"][0]
    res = out.args[0]
    return list(res) if isinstance(res, (list, tuple)) else [res]


def as_module(model):
    import torch

    if isinstance(model, torch.nn.Module):
        return model
    fn = model

    class Fn(torch.nn.Module):
        def forward(self, *a):
            return fn(*a)

    # torch.export names placeholders after forward's parameters.
    Fn.forward.__signature__ = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)] + list(inspect.signature(fn).parameters.values()))
    return Fn()


def unsupported_error(script, unsupported, graph):
    total = sum(unsupported.values())
    lines = ["%s: %d node%s with operators our graph format/compiler does not support (%s graph; nothing written):"
             % (script, total, "" if total == 1 else "s", graph)]
    for op, c in sorted(unsupported.items()):
        lines.append("  %s x%d" % (op, c))
    lines.append("supported: docs/graph-format.md, 'Operators'")
    return "\n".join(lines)


def export_forward(model, example_inputs):
    import torch

    ep = torch.export.export(as_module(model), tuple(example_inputs)).run_decompositions()
    gm = ep.graph_module
    sig = ep.graph_signature
    state = dict(ep.state_dict)
    state.update(getattr(ep, "constants", {}) or {})
    user = iter(example_inputs)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    inputs, arrays, names = [], {}, {}
    namer = Namer()
    for spec, ph in zip(sig.input_specs, placeholders):
        kind = spec.kind.name
        if kind == "USER_INPUT":
            t = next(user)
        elif kind in ("PARAMETER", "BUFFER", "CONSTANT_TENSOR"):
            t = state[spec.target]
        else:
            raise ExportError("input %s of kind %s is not supported" % (ph.name, kind))
        names[ph] = namer(ph.name)
        inputs.append(dict(tensor_input(names[ph], t), kind=kind.lower(), **({"target": spec.target} if spec.target else {})))
        arrays[names[ph]] = t.detach().cpu().numpy()
    nodes, outs, unsupported = convert(gm, names, fx_outputs, namer)
    return {"inputs": inputs, "nodes": nodes, "outputs": outs}, arrays, unsupported


def export_joint(model, example_inputs, fwd):
    """Forward + gradients (make_fx through autograd, core-aten decompositions):
    inputs are the forward's inputs and tangents_1; outputs the forward output then
    one gradient per float input (`grads`: input -> node), like example_5_1_joint.json."""
    import torch
    from torch._decomp import core_aten_decompositions
    from torch.fx.experimental.proxy_tensor import make_fx

    mod = as_module(model)
    params = dict(mod.named_parameters())
    order = [i["name"] for i in fwd["inputs"]]
    kinds = {i["name"]: i for i in fwd["inputs"]}
    values = []
    user = iter(example_inputs)
    for i in fwd["inputs"]:
        values.append(params[i["target"]].detach() if i["kind"] == "parameter" else next(user))
    diff = [k for k, v in zip(order, values) if v.is_floating_point() and (kinds[k]["kind"] == "parameter")]

    def joint(*a):
        vals, tangent = list(a[:-1]), a[-1]
        vals = [v.detach().requires_grad_(k in diff) for k, v in zip(order, vals)]
        p = {kinds[k]["target"]: v for k, v in zip(order, vals) if kinds[k]["kind"] == "parameter"}
        u = [v for k, v in zip(order, vals) if kinds[k]["kind"] == "user_input"]
        y = torch.func.functional_call(mod, p, tuple(u))
        gs = torch.autograd.grad(y, [v for k, v in zip(order, vals) if k in diff], tangent)
        return (y,) + tuple(gs)

    y0 = mod(*example_inputs)
    if y0.dim() != 0:
        raise ExportError("backward = True needs a scalar output, got shape %s" % list(y0.shape))
    gm = make_fx(joint, decomposition_table=core_aten_decompositions())(*values, torch.ones_like(y0))
    phs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    names = {ph: nm for ph, nm in zip(phs, order + ["tangents_1"])}
    namer = Namer()
    for nm in names.values():
        namer(nm)
    nodes, outs, unsupported = convert(gm, names, fx_outputs, namer)
    if unsupported:
        return None, unsupported
    # Phase: nodes the forward output depends on are forward.
    by = {n["name"]: n for n in nodes}
    fwd_set, stack = set(), [outs[0]]
    while stack:
        s = stack.pop()
        if s in by and s not in fwd_set:
            fwd_set.add(s)
            stack.extend(r for r in refs(by[s]["args"]) if r in by)
    for n in nodes:
        n["phase"] = "forward" if n["name"] in fwd_set else "backward"
    inputs = [{k: v for k, v in kinds[k2].items()} for k2 in order]
    inputs.append({"name": "tangents_1", "dtype": dtype_name(y0.dtype), "shape": [], "kind": "tangent"})
    g = {"inputs": inputs, "nodes": nodes, "outputs": outs, "primals": order, "tangents": ["tangents_1"],
         "forward_outputs": outs[:1], "grads": dict(zip(diff, outs[1:]))}
    return g, unsupported


def refs(args):
    for a in args:
        if isinstance(a, str):
            yield a
        elif isinstance(a, list):
            yield from refs(a)


def write_graph(path, g):
    """One node per line, like examples/graphs/."""
    with open(path, "w") as f:
        f.write("{\n")
        parts = []
        for key, val in g.items():
            if key in ("inputs", "nodes"):
                body = ",\n".join("    " + json.dumps(x) for x in val)
                parts.append('  "%s": [\n%s\n  ]' % (key, body))
            else:
                parts.append('  "%s": %s' % (key, json.dumps(val)))
        f.write(",\n".join(parts) + "\n}\n")


def export_script(script, out, npy=True):
    """Returns 0, or raises ExportError (the caller prints it and exits 2)."""
    import torch

    if not os.path.isfile(script):
        raise ExportError("%s: no such file" % script)
    env = runpy.run_path(script, run_name="stax_export")
    for k in ("model", "example_inputs"):
        if k not in env:
            raise ExportError("%s: the script must define `%s`" % (script, k))
    model, ex = env["model"], env["example_inputs"]
    if not isinstance(ex, tuple) or not all(isinstance(t, torch.Tensor) for t in ex):
        raise ExportError("%s: `example_inputs` must be a tuple of tensors" % script)
    g, arrays, unsupported = export_forward(model, ex)
    if unsupported:
        raise ExportError(unsupported_error(script, unsupported, "forward"))
    joint = None
    if env.get("backward"):
        joint, unsupported = export_joint(model, ex, g)
        if unsupported:
            raise ExportError(unsupported_error(script, unsupported, "joint"))
    os.makedirs(out, exist_ok=True)
    g = dict(g, source="python -m stax_torch export %s (torch %s)" % (os.path.basename(script), torch.__version__))
    write_graph(os.path.join(out, "graph.json"), g)
    if joint is not None:
        write_graph(os.path.join(out, "joint.json"), joint)
    if npy:
        for name, a in arrays.items():
            np.save(os.path.join(out, name + ".npy"), a)
        # PyTorch eager's output, for comparisons with `stax run`.
        with torch.no_grad():
            y = model(*ex)
        if isinstance(y, (tuple, list)):  # several outputs: expected-OUTPUT.npy each, by the graph's names
            if len(y) != len(g["outputs"]):
                raise ExportError("%s: the model returns %d values for %d graph outputs"
                                  % (script, len(y), len(g["outputs"])))
            for name, t in zip(g["outputs"], y):
                np.save(os.path.join(out, "expected-%s.npy" % name), t.detach().cpu().numpy())
            if joint is not None:
                raise ExportError("%s: `backward` needs a model with one output" % script)
            return g, joint
        np.save(os.path.join(out, "expected.npy"), y.detach().cpu().numpy())
        if joint is not None:  # the joint graph's cotangent input: d(output)/d(output) = 1
            np.save(os.path.join(out, "tangents_1.npy"), np.ones(tuple(y.shape), dtype=y.detach().cpu().numpy().dtype))
    return g, joint


def main(script, out, npy=True):
    try:
        g, joint = export_script(script, out, npy)
    except ExportError as e:
        print("stax_torch export: %s" % e, file=sys.stderr)
        return 2
    print("stax_torch export: %s -> %s/graph.json (%d inputs, %d nodes%s)"
          % (script, out, len(g["inputs"]), len(g["nodes"]), ", joint.json %d nodes" % len(joint["nodes"]) if joint else ""))
    return 0
