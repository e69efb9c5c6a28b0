// Transforms of the tensor core language (§6.3–6.9, docs/design.md §3). Each is a
// pure function on programs that declares its semantic class and logs every
// rewrite, so a failure can be bisected to one rewrite (LLVM debug-counter
// style: Context::max_rewrites).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "semantics/ir.h"
#include "semantics/obligation.h"

namespace stax::xform {

/// exact: same bits on every input; refines: same value wherever the source
/// has one; real: same real semantics, float result within the error bound.
enum class SemClass { Exact, Refines, Real };
std::string_view class_name(SemClass c);
std::optional<SemClass> class_from_name(std::string_view s);
/// The weaker of two classes (exact < refines < real).
SemClass weaker(SemClass a, SemClass b);

/// The `key=val` parameters of one step of a pipeline, as written. The
/// registry parses them into the pass's typed options (passes.h); passes
/// never read this map.
using Params = std::map<std::string, std::string>;

/// A user error in a transform's parameters (unknown key, bad value, unknown
/// binding).
struct TransformError {
  std::string message;
};

/// Counts rewrites across a pipeline; once `max_rewrites` is reached, no
/// further rewrite is allowed (transforms leave the rest untouched).
struct Context {
  int64_t max_rewrites = -1;
  int64_t count = 0;
  std::vector<std::string> log;
  /// Call before a rewrite; false means "stop rewriting".
  bool allow() const { return max_rewrites < 0 || count < max_rewrites; }
  void note(std::string what) {
    ++count;
    log.push_back("#" + std::to_string(count) + " " + std::move(what));
  }
  /// Proves the side conditions a rewrite needs first (a view composition
  /// through floor/mod, a loop merge): the caller's prover, by default the
  /// one installed for the process (sem::discharge_default; Z3's where
  /// proofs is linked). A condition not proved refuses the rewrite.
  sem::Discharger discharge = sem::discharge_default;
};

struct Result {
  sem::Program program;
  SemClass cls = SemClass::Exact;  ///< the class of this application
};

struct TransformInfo {
  std::string name;
  SemClass cls;        ///< the class it declares in general
  std::string params;  ///< documentation of its parameters
  std::string summary;
  /// Parses and validates `Params` into the pass's options (TransformError on
  /// an unknown key or a bad value), then runs the pass.
  std::function<Result(const sem::Program&, const Params&, Context&)> run;
};

/// Every registered transform, in a fixed order.
const std::vector<TransformInfo>& registry();
const TransformInfo* find_transform(std::string_view name);

struct Step {
  const TransformInfo* info;
  Params params;
  std::string text;
};
/// Parses "NAME[:key=val...][,NAME...]"; unknown names are an error message.
std::variant<std::vector<Step>, std::string> parse_pipeline(std::string_view spec);
/// Runs the steps in order; the class is the weakest of the applications.
/// Throws TransformError on bad parameters.
Result run_pipeline(const sem::Program& p, const std::vector<Step>& steps, Context& ctx);

}  // namespace stax::xform
