// Text and JSON forms of a BoundReport (`stax bound`, docs/design.md §8).
#include <cmath>
#include <cstdio>

#include "oracle/error_bound/error_bound.h"
#include "semantics/printer.h"

namespace stax::oracle {

using namespace sem;

namespace {

std::string fmt(double v, int prec = 3) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", prec, v);
  return buf;
}

std::string pad(const std::string& s, size_t w) { return s.size() >= w ? s : s + std::string(w - s.size(), ' '); }

}  // namespace

std::string format_bound_report(const BoundReport& r, const std::string& what) {
  std::string s = "error bounds: " + what + "\n";
  if (r.failure) return s + "the program fails (⊥) on these inputs: " + r.failure->str() + "\n";
  if (r.error) return s + "not checked: " + *r.error + "\n";
  if (r.rows.empty()) return s + "no floating-point sum/prod/max/min reduction to bound\n";
  std::vector<std::vector<std::string>> t = {
      {"reduction", "op", "dtype", "elements", "summands", "max depth", "worst at", "computed", "exact", "|error|",
       "bound", "ratio"}};
  for (const BoundRow& w : r.rows) {
    std::string depth = std::to_string(w.max_depth);
    if (w.max_effective_depth != w.max_depth) depth += " (eff " + std::to_string(w.max_effective_depth) + ")";
    if (!w.extra_roundings.empty()) depth += " " + w.extra_roundings;
    t.push_back({w.name + (w.output ? " (output)" : ""), std::string(red_name(w.op)),
                 std::string(dtype_name(w.dtype)), std::to_string(w.elements), std::to_string(w.summands), depth,
                 w.worst >= 0 ? index_text(w.worst_index) : "-", w.worst >= 0 ? fmt(w.computed, 8) : "-",
                 w.worst >= 0 ? fmt(w.exact, 8) : "-", w.worst >= 0 ? fmt(w.measured) : "-",
                 w.worst >= 0 ? fmt(w.bound) : "-", w.worst >= 0 ? fmt(w.ratio) : "-"});
  }
  std::vector<size_t> width(t[0].size(), 0);
  for (const auto& row : t)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  for (size_t i = 0; i < t.size(); ++i) {
    std::string line;
    for (size_t c = 0; c < t[i].size(); ++c) line += pad(t[i][c], width[c] + 2);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    s += line + "\n";
  }
  s += "\n";
  for (const BoundRow& w : r.rows) {
    s += w.name + ": " + w.higham + (w.higham_match ? "" : (w.levels.empty() ? "" : " (max depth differs)")) +
         "; u = 2^" + std::to_string(std::ilogb(unit_roundoff(w.acc))) + " (" + std::string(dtype_name(w.acc)) +
         "); " + std::to_string(w.checked) + " element(s) checked";
    if (w.skipped) s += ", " + std::to_string(w.skipped) + " outside the model: " + w.skip_reason;
    s += "\n";
    if (w.ratio > 1.0) {
      s += "  BOUND EXCEEDED at " + w.name + index_text(w.worst_index) + ": |error| " + fmt(w.measured, 6) +
           " > bound " + fmt(w.bound, 6) + " (ratio " + fmt(w.ratio) + ")\n";
    }
    if (!w.top.empty()) {
      s += "  largest contributions to the bound at " + w.name + index_text(w.worst_index) + " (c_i·|a_i|):\n";
      for (const Contribution& c : w.top)
        s += "    " + pad(c.where, 24) + " a = " + pad(fmt(c.value, 8), 16) + " depth " + pad(c.depth_text, 6) +
             " -> " + fmt(c.term) + "\n";
    }
  }
  s += r.within() ? "\nwithin the bounds: max ratio " + fmt(r.max_ratio) + "\n"
                  : "\nBOUND EXCEEDED: max ratio " + fmt(r.max_ratio) +
                        " (a bug in the transform, the kernel or the analysis)\n";
  return s;
}

nlohmann::json bound_report_json(const BoundReport& r, const std::string& what) {
  nlohmann::json j;
  j["check"] = what;
  auto num = [](double v) -> nlohmann::json {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return v;
  };
  if (r.failure) {
    j["verdict"] = "failed";
    j["failure"] = r.failure->str();
    return j;
  }
  if (r.error) {
    j["verdict"] = "not checked";
    j["error"] = *r.error;
    return j;
  }
  j["verdict"] = r.within() ? "within" : "exceeded";
  j["max_ratio"] = num(r.max_ratio);
  j["seconds"] = r.seconds;
  nlohmann::json rows = nlohmann::json::array();
  for (const BoundRow& w : r.rows) {
    nlohmann::json o;
    o["name"] = w.name;
    o["output"] = w.output;
    o["op"] = red_name(w.op);
    o["dtype"] = dtype_name(w.dtype);
    o["accumulation"] = dtype_name(w.acc);
    o["unit_roundoff"] = unit_roundoff(w.acc);
    o["shape"] = w.shape;
    o["elements"] = w.elements;
    o["checked"] = w.checked;
    o["skipped"] = w.skipped;
    if (w.skipped) o["skip_reason"] = w.skip_reason;
    o["summands"] = w.summands;
    o["levels"] = w.levels;
    o["max_depth"] = w.max_depth;
    o["max_effective_depth"] = w.max_effective_depth;
    o["extra_roundings"] = w.extra_roundings;
    o["case"] = w.higham;
    o["case_matches"] = w.higham_match;
    if (w.worst >= 0) {
      o["worst_index"] = w.worst_index;
      o["computed"] = num(w.computed);
      o["exact"] = num(w.exact);
      o["measured"] = num(w.measured);
      o["bound"] = num(w.bound);
      o["ratio"] = num(w.ratio);
      o["sum_abs"] = num(w.sum_abs);
    }
    nlohmann::json top = nlohmann::json::array();
    for (const Contribution& c : w.top)
      top.push_back({{"where", c.where}, {"value", num(c.value)}, {"depth", c.depth}, {"depth_text", c.depth_text},
                     {"term", num(c.term)}});
    o["contributions"] = top;
    rows.push_back(o);
  }
  j["rows"] = rows;
  return j;
}

}  // namespace stax::oracle
