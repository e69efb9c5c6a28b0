#include "peers/torch_check.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include <fstream>
#include <sstream>

#include "compiler/lower.h"
#include "semantics/enclosure_domain.h"
#include "semantics/evaluator.h"
#include "semantics/npy.h"
#include "transforms/passes.h"

namespace stax::peers {

using sem::DType;
using sem::Tensor;

std::string_view class_name(NodeClass c) {
  switch (c) {
    case NodeClass::Exact: return "exact";
    case NodeClass::TorchSum: return "torch-sum";
    case NodeClass::Enclosure: return "enclosure";
  }
  return "?";
}

NodeClass node_class(const std::string& op) {
  // PyTorch's CPU kernels of these compute one IEEE operation per element
  // (or move, compare and select values), so any faithful kernel gives our bits.
  static const std::set<std::string> exact = {
      "add.Tensor", "add.Scalar", "sub.Tensor", "sub.Scalar", "mul.Tensor", "mul.Scalar", "div.Tensor",
      "div.Scalar", "remainder.Tensor", "remainder.Scalar", "floor_divide.default", "maximum.default",
      "minimum.default", "eq.Tensor", "eq.Scalar", "ne.Tensor", "ne.Scalar", "lt.Tensor", "lt.Scalar",
      "le.Tensor", "le.Scalar", "gt.Tensor", "gt.Scalar", "ge.Tensor", "ge.Scalar", "neg.default",
      "abs.default", "relu.default", "sqrt.default", "floor.default", "clone.default", "alias.default",
      "contiguous.default", "_to_copy.default", "to.dtype", "t.default", "where.self", "amax.default",
      "amin.default", "argmax.default", "argmin.default", "transpose.int", "permute.default", "expand.default",
      "view.default", "reshape.default", "_unsafe_view.default", "unsqueeze.default", "squeeze.dim",
      "squeeze.dims", "squeeze.default", "index.Tensor", "full.default", "slice.Tensor", "select.int",
      "cat.default", "arange.default", "arange.start", "arange.start_step", "zeros.default", "ones.default",
      "scalar_tensor.default", "gather.default"};
  // ATen's mean on CPU is sum_out(...).div_(n): the sum's order, then one division.
  static const std::set<std::string> sums = {"sum.default", "sum.dim_IntList", "mean.dim", "mean.default"};
  if (exact.count(op)) return NodeClass::Exact;
  if (sums.count(op)) return NodeClass::TorchSum;
  return NodeClass::Enclosure;
}

std::string Finding::str() const {
  std::string s = (op.empty() ? "output " : "node ") + node + (op.empty() ? "" : " (" + op + ")") + " [" + cls +
                  (kind.empty() ? "" : ", " + kind) + "] at " + sem::index_text(index) + ": PyTorch " + theirs + ", ours " + ours;
  return s;
}

namespace {

/// Our IEEE value of one element against PyTorch's, in ULPs of the dtype
/// (inf when one is NaN or infinite and the other is not the same).
double ulps_between(const Tensor& a, const Tensor& b, int64_t i) {
  double x = a.get_double(i), y = b.get_double(i);
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y) ? 0 : INFINITY;
  if (std::isinf(x) || std::isinf(y)) return x == y ? 0 : INFINITY;
  return sem::grid_distance(x, y, a.dtype);
}

/// Compares `theirs` with our IEEE result (and, for enclosures, with the
/// enclosure), filling the report and appending findings.
void judge(const std::string& node, const std::string& op, const std::string& cls, const Tensor& theirs, const Tensor& ieee,
           const sem::EncTensor* enc, const Options& opt, NodeReport& nr, Report& r) {
  nr.elements = theirs.size();
  bool fl = sem::is_float(theirs.dtype);
  bool by_enc = enc && fl;  // integer and bool results are judged by their bits
  int64_t listed = 0;
  std::vector<double> widths;
  for (int64_t i = 0; i < theirs.size(); ++i) {
    bool same = sem::element_equal(theirs, ieee, i);
    if (!same) ++nr.differ;
    if (fl && !same) nr.max_ulps = std::max(nr.max_ulps, ulps_between(theirs, ieee, i));
    const sem::EVal* e = by_enc ? &enc->data[size_t(i)] : nullptr;
    if (e) {
      auto [l, h] = sem::faithful_bounds(*e);
      if (std::isfinite(l) && std::isfinite(h)) widths.push_back(sem::grid_distance(l, h, theirs.dtype));
    }
    if (e ? sem::faithful_contains(*e, theirs.dtype, theirs.get_double(i)) : same) continue;
    ++nr.outside;
    ++r.finding_count;
    if (listed++ >= opt.max_findings) continue;
    Finding f{node, op, cls, "", sem::unflatten(theirs.shape, i), sem::element_text(theirs, i),
              e ? sem::faithful_text(*e, theirs.dtype) + " (IEEE " + sem::element_text(ieee, i) + ")"
                : sem::element_text(ieee, i)};
    f.theirs_value = theirs.get_double(i);
    f.ours_value = ieee.get_double(i);
    double a = f.theirs_value, b = f.ours_value;
    if (std::isnan(a) != std::isnan(b)) f.kind = "NaN";
    else if (a == 0 && b == 0 && std::signbit(a) != std::signbit(b) && !e) f.kind = "sign of zero";
    else f.kind = "value";
    f.exact = !e;
    if (e) {
      std::tie(f.lo, f.hi) = sem::faithful_bounds(*e);
      f.nan_ok = sem::faithful_contains(*e, theirs.dtype, NAN);
    }
    r.findings.push_back(std::move(f));
  }
  if (!widths.empty()) {
    auto mid = widths.begin() + std::ptrdiff_t(widths.size() / 2);
    std::nth_element(widths.begin(), mid, widths.end());
    nr.median_width = *mid;
    nr.max_width = *std::max_element(widths.begin(), widths.end());
  }
}

std::optional<std::string> shape_mismatch(const Tensor& t, const sem::TensorType& want) {
  if (t.dtype == want.dtype && t.shape == want.shape) return std::nullopt;
  return "PyTorch's tensor is " + sem::type_str({t.dtype, t.shape}) + ", the graph's " + sem::type_str(want);
}

/// The eager lowering of a graph; nullopt and a note on an error.
std::optional<sem::Program> lower_eager(const compiler::Graph& g, std::string& note) {
  compiler::LowerOptions lo;
  lo.eager = true;
  auto l = compiler::lower_graph(g, lo);
  if (auto* e = std::get_if<compiler::GraphError>(&l)) {
    note = "not lowered: " + e->str();
    return std::nullopt;
  }
  return std::get<compiler::Lowered>(l).program;
}

}  // namespace

void check_eager(const compiler::Graph& g, const TensorMap& inputs, const TensorMap& eager, const Options& opt,
                 Report& r) {
  r.model = opt.model.describe();
  std::map<std::string, sem::TensorType> types;
  for (const auto& in : g.inputs) types[in.name] = in.type;
  auto value_of = [&](const std::string& name) -> const Tensor* {
    if (auto it = inputs.find(name); it != inputs.end()) return &it->second;
    if (auto it = eager.find(name); it != eager.end()) return &it->second;
    return nullptr;
  };
  for (const compiler::Node& n : g.nodes) {
    NodeReport nr;
    nr.node = n.name;
    nr.op = n.op;
    NodeClass cls = node_class(n.op);
    nr.cls = std::string(class_name(cls));
    // The node alone: its operands become inputs of their recorded types.
    compiler::Graph one;
    one.file = g.file;
    std::vector<std::string> refs;
    for (const std::string& ref : compiler::node_refs(n))
      if (std::find(refs.begin(), refs.end(), ref) == refs.end()) refs.push_back(ref);
    std::string missing;
    for (const std::string& ref : refs) {
      if (!types.count(ref)) missing = ref;
      else one.inputs.push_back({ref, types[ref]});
    }
    one.nodes = {n};
    one.outputs = {n.name};
    auto finish = [&](std::string note) {
      nr.note = std::move(note);
      nr.checked = false;
      r.nodes.push_back(nr);
    };
    if (!missing.empty()) {
      finish("its operand " + missing + " has no type (an earlier node was not lowered)");
      continue;
    }
    std::optional<sem::Program> p = lower_eager(one, nr.note);
    if (!p) {
      finish(nr.note);
      continue;
    }
    const sem::TensorType* out_type = p->type_of(n.name);
    types[n.name] = *out_type;
    auto theirs = eager.find(n.name);
    if (theirs == eager.end()) {
      finish("no PyTorch output recorded");
      continue;
    }
    if (auto bad = shape_mismatch(theirs->second, *out_type)) {
      nr.cls = "shape";
      nr.outside = 1;
      ++r.finding_count;
      r.findings.push_back({n.name, n.op, "shape", "shape", {}, *bad, sem::type_str(*out_type), 0, true, 0, 0, 0, false});
      r.nodes.push_back(nr);
      continue;
    }
    sem::Inputs in;
    std::string bad_input;
    for (const std::string& ref : refs) {
      const Tensor* t = value_of(ref);
      if (!t) bad_input = ref + ": no value (neither a graph input file nor a PyTorch output)";
      else if (auto m = shape_mismatch(*t, types[ref])) bad_input = ref + ": " + *m;
      else in[ref] = *t;
    }
    if (!bad_input.empty()) {
      finish("operand " + bad_input);
      continue;
    }
    sem::Program judged = *p;
    std::string strided;
    for (const std::string& ref : refs)
      if (opt.noncontiguous.count(ref)) strided = ref;
    if (cls == NodeClass::TorchSum && !strided.empty()) {
      cls = NodeClass::Enclosure;
      nr.cls = std::string(class_name(cls));
      nr.note = "PyTorch's operand " + strided + " is not contiguous (a view's strides); torch-sum models "
                "contiguous operands: any order";
    }
    if (cls == NodeClass::TorchSum) {
      xform::TorchSumOptions tso;
      tso.threads = opt.threads;
      xform::Context ctx;
      xform::Result res = xform::torch_sum(*p, tso, ctx);
      if (ctx.count > 0) {
        judged = res.program;
      } else {
        cls = NodeClass::Enclosure;
        nr.cls = std::string(class_name(cls));
        nr.note = "torch-sum does not model this sum (a non-contiguous or integer operand): any order";
      }
    }
    sem::IeeeOutcome ieee = sem::eval_ieee(judged, in);
    if (ieee.failure) {
      finish("our reference fails on PyTorch's inputs: " + ieee.failure->str());
      continue;
    }
    const Tensor& ours = *ieee.outputs.at(n.name);
    if (cls != NodeClass::Enclosure) {
      judge(n.name, n.op, nr.cls, theirs->second, ours, nullptr, opt, nr, r);
    } else {
      sem::EnclosureOutcome enc = sem::eval_faithful(*p, in, opt.model);
      if (enc.failure || enc.indeterminate) {
        finish("the enclosure decides nothing: " + (enc.failure ? enc.failure->str() : *enc.indeterminate));
        continue;
      }
      judge(n.name, n.op, nr.cls, theirs->second, ours, enc.outputs.at(n.name).get(), opt, nr, r);
    }
    r.nodes.push_back(nr);
  }
}

void check_outputs(const compiler::Graph& g, const TensorMap& inputs, const std::vector<PeerOutputs>& peers,
                   const Options& opt, Report& r) {
  r.model = opt.model.describe();
  auto skip_all = [&](const std::string& why) {
    for (const PeerOutputs& peer : peers)
      for (const std::string& o : g.outputs) {
        NodeReport nr;
        nr.node = o;
        nr.cls = peer.who;
        nr.checked = false;
        nr.note = why;
        r.outputs.push_back(nr);
      }
  };
  std::string note;
  std::optional<sem::Program> p = lower_eager(g, note);
  if (!p) return skip_all(note);
  sem::Inputs in;
  for (const auto& gi : g.inputs) {
    auto it = inputs.find(gi.name);
    if (it == inputs.end()) return skip_all("graph input " + gi.name + " has no value");
    if (auto m = shape_mismatch(it->second, gi.type)) return skip_all("graph input " + gi.name + ": " + *m);
    in[gi.name] = it->second;
  }
  // One evaluation of the graph serves every peer's outputs.
  sem::IeeeOutcome ieee = sem::eval_ieee(*p, in);
  sem::EnclosureOutcome enc = sem::eval_faithful(*p, in, opt.model);
  if (ieee.failure || enc.failure)
    return skip_all("the graph fails on its inputs: " + (ieee.failure ? ieee.failure->str() : enc.failure->str()));
  if (enc.indeterminate) {
    r.indeterminate = *enc.indeterminate;
    return skip_all("the enclosure decides nothing: " + *enc.indeterminate);
  }
  for (const PeerOutputs& peer : peers)
    for (const std::string& o : g.outputs) {
      NodeReport nr;
      nr.node = o;
      nr.cls = peer.who;
      auto it = peer.outputs.find(o);
      if (it == peer.outputs.end()) {
        nr.checked = false;
        nr.note = "no " + peer.who + " output recorded";
        r.outputs.push_back(nr);
        continue;
      }
      const sem::TensorType* t = p->type_of(o);
      if (auto bad = shape_mismatch(it->second, *t)) {
        nr.outside = 1;
        ++r.finding_count;
        r.findings.push_back({o, "", peer.who + " shape", "shape", {}, *bad, sem::type_str(*t), 0, true, 0, 0, 0, false});
        r.outputs.push_back(nr);
        continue;
      }
      judge(o, "", peer.who + " enclosure", it->second, *ieee.outputs.at(o), enc.outputs.at(o).get(), opt, nr, r);
      r.outputs.push_back(nr);
    }
}

void check_outputs(const compiler::Graph& g, const TensorMap& inputs, const TensorMap& outputs,
                   const std::string& who, const Options& opt, Report& r) {
  check_outputs(g, inputs, {{who, outputs}}, opt, r);
}

std::optional<std::string> read_tensors(const std::filesystem::path& dir, const std::vector<std::string>& names,
                                        bool optional, TensorMap& out) {
  for (const std::string& n : names) {
    std::filesystem::path f = dir / (n + ".npy");
    if (!std::filesystem::exists(f)) {
      if (optional) continue;
      return f.string() + ": no such file (graph input " + n + ")";
    }
    auto t = sem::read_npy(f.string());
    if (auto* e = std::get_if<std::string>(&t)) return *e;
    out[n] = std::get<sem::Tensor>(std::move(t));
  }
  return std::nullopt;
}

std::optional<std::string> read_trace_meta(const std::string& file, Options& opt) {
  std::ifstream f(file);
  if (!f) return file + ": cannot be read";
  nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return file + ": not a JSON object";
  if (j.contains("threads")) {
    if (!j["threads"].is_number_integer()) return file + ": \"threads\" must be an integer";
    opt.threads = j["threads"].get<int64_t>();
  }
  if (j.contains("noncontiguous")) {
    if (!j["noncontiguous"].is_array()) return file + ": \"noncontiguous\" must be an array of names";
    for (const auto& n : j["noncontiguous"]) {
      if (!n.is_string()) return file + ": \"noncontiguous\" must be an array of names";
      opt.noncontiguous.insert(n.get<std::string>());
    }
  }
  return std::nullopt;
}

nlohmann::json Report::to_json() const {
  auto node_json = [](const NodeReport& n) {
    nlohmann::json j = {{"name", n.node}, {"class", n.cls}, {"checked", n.checked}, {"elements", n.elements},
                        {"outside", n.outside}, {"differ", n.differ}, {"max_width_ulps", n.max_width},
                        {"median_width_ulps", n.median_width},
                        {"max_ulps", std::isinf(n.max_ulps) ? nlohmann::json("inf") : nlohmann::json(n.max_ulps)}};
    if (!n.op.empty()) j["op"] = n.op;
    if (!n.note.empty()) j["note"] = n.note;
    return j;
  };
  nlohmann::json j = {{"model", model}, {"findings", finding_count}, {"nodes", nlohmann::json::array()},
                      {"outputs", nlohmann::json::array()}, {"listed", nlohmann::json::array()}};
  for (const NodeReport& n : nodes) j["nodes"].push_back(node_json(n));
  for (const NodeReport& n : outputs) j["outputs"].push_back(node_json(n));
  for (const Finding& f : findings)
    j["listed"].push_back({{"node", f.node}, {"op", f.op}, {"class", f.cls}, {"kind", f.kind}, {"index", f.index},
                           {"pytorch", f.theirs}, {"ours", f.ours}});
  if (indeterminate) j["indeterminate"] = *indeterminate;
  return j;
}

std::string Report::text() const {
  std::ostringstream s;
  s << "# model of PyTorch's library: " << model << "\n";
  auto line = [&](const NodeReport& n) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", n.max_ulps);
    s << "  " << n.node;
    if (!n.op.empty()) s << " (" << n.op << ")";
    s << " [" << n.cls << "] ";
    if (!n.checked) s << "not checked: " << n.note << "\n";
    else
      s << (n.outside ? std::to_string(n.outside) + " of " + std::to_string(n.elements) + " outside"
                      : std::to_string(n.elements) + " ok")
        << "; " << n.differ << " differ from our IEEE bits" << (n.differ ? std::string(", max ") + buf + " ulp" : "")
        << (n.max_width > 0 ? "; enclosure width median " + std::to_string(int64_t(n.median_width)) + ", max " +
                                  std::to_string(int64_t(n.max_width)) + " ulp"
                            : "")
        << (n.note.empty() ? "" : "; " + n.note) << "\n";
  };
  if (!nodes.empty())
    s << "eager, op by op (exact: our bits; torch-sum: our bits in torch.sum's order; enclosure: faithful "
         "enclosure of our decomposition):\n";
  for (const NodeReport& n : nodes) line(n);
  if (!outputs.empty())
    s << "whole graph, faithful enclosure (IEEE ops rounded once, library functions within the model, float sums "
         "in any order):\n";
  for (const NodeReport& n : outputs) line(n);
  for (const Finding& f : findings) s << "finding: " << f.str() << "\n";
  if (finding_count > int64_t(findings.size()))
    s << "(" << finding_count - int64_t(findings.size()) << " more findings not listed)\n";
  return s.str();
}

}  // namespace stax::peers
