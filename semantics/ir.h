// The tensor core language (Def. 6.5 of the text; docs/design.md §2): constants, scalar
// lambdas, index maps, tensor expressions and programs. Nodes are immutable
// and carry a cached structural hash; structural equality ignores source
// locations and lambda parameter names, so CSE can hash-cons on it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "semantics/diag.h"
#include "semantics/dtype.h"
#include "semantics/scalar_op.h"

namespace stax::sem {

using Shape = std::vector<int64_t>;
int64_t num_elements(const Shape& s);
/// The most elements a shape may have: the parser, the graph loader and the
/// lowering refuse larger ones, so element counts and strides fit in int64.
inline constexpr int64_t kMaxElements = int64_t(1) << 48;
/// Whether `s` has more than kMaxElements elements, zero extents counting as
/// 1 (so that the strides of an empty tensor cannot overflow either).
bool too_many_elements(const Shape& s);
/// `[2, 3]`: the text of a shape in diagnostics and printed programs.
std::string shape_text(const Shape& s);
/// Strides of a dense row-major layout of `s`, in elements.
std::vector<int64_t> row_major_strides(const Shape& s);

struct TensorType {
  DType dtype = DType::F32;
  Shape shape;
  bool operator==(const TensorType&) const = default;
};
std::string type_str(const TensorType& t);
/// Bytes of a tensor of this type in memory (the backends' bandwidth figures).
int64_t type_bytes(const TensorType& t);

/// A typed scalar constant, stored as the bit pattern of its dtype (f16/bf16:
/// 16 bits; i32/i64: two's complement sign-extended to 64 bits; bool: 0/1).
struct Const {
  DType dtype = DType::F32;
  uint64_t bits = 0;
  bool operator==(const Const&) const = default;

  static Const f32(float v);
  static Const f64(double v);
  static Const i64(int64_t v, DType t = DType::I64);
  static Const boolean(bool v);
  /// The value widened to double (exact for every float dtype).
  double as_double() const;
  int64_t as_int() const;
};

/// Parse a literal for a dtype, rounding once (to nearest even). Returns an
/// error message when the literal cannot have that dtype.
std::variant<Const, std::string> const_from_literal(std::string_view text, DType t);
/// Shortest text that reads back to the same bits for the constant's dtype.
std::string const_to_string(const Const& c);

// ---- Scalar lambdas, compiled to a flat instruction list ----

struct Instr {
  enum class Kind : uint8_t { Param, Const, Op, Cast };
  Kind kind = Kind::Param;
  ScalarOp op = ScalarOp::Add;
  DType type = DType::F32;  ///< result tag (half tags are carried in f32)
  int32_t a = -1, b = -1, c = -1;  ///< operands (instruction indices), or param index in `a`
  Const value;                   ///< for Const
  bool operator==(const Instr& o) const {
    return kind == o.kind && op == o.op && type == o.type && a == o.a && b == o.b && c == o.c &&
           value == o.value;
  }
};

struct Lambda {
  std::vector<std::string> params;  ///< names, for printing only
  std::vector<DType> param_types;
  std::vector<Instr> code;  ///< SSA, operands precede users; the last instruction is the result
  DType result_type() const { return code.back().type; }
  bool operator==(const Lambda& o) const { return param_types == o.param_types && code == o.code; }
  /// True when the body may raise ⊥ (integer division by zero).
  bool may_fail() const;
};

// ---- Index maps ----

struct IExprNode;
using IExpr = std::shared_ptr<const IExprNode>;

struct IExprNode {
  enum class Kind : uint8_t { Const, Var, Add, Sub, Mul, FloorDiv, Mod, Load };
  Kind kind;
  int64_t value = 0;        ///< Const value; Mul/FloorDiv/Mod constant; Var index
  std::vector<IExpr> args;  ///< Add/Sub: 2; Mul/FloorDiv/Mod: 1; Load: the indices
  std::string name;         ///< Load: the tensor read
  SourceLoc loc;
};

IExpr iconst(int64_t v);
IExpr ivar(int index);
IExpr iadd(IExpr a, IExpr b);
IExpr isub(IExpr a, IExpr b);
IExpr imul(int64_t c, IExpr a);
IExpr ifloordiv(IExpr a, int64_t c);
IExpr imod(IExpr a, int64_t c);
IExpr iload(std::string name, std::vector<IExpr> args);
bool iexpr_equal(const IExpr& a, const IExpr& b);
size_t iexpr_hash(const IExpr& e);
bool iexpr_has_load(const IExpr& e);

/// For each dimension of the viewed tensor, an integer expression over the
/// result's index variables (named for printing only).
struct IndexMap {
  std::vector<std::string> vars;
  std::vector<IExpr> exprs;
  bool operator==(const IndexMap& o) const;
};

/// Affine form `A·i + c` of an index map (Prop. 6.2), when it has one.
struct Affine {
  std::vector<std::vector<int64_t>> a;  ///< rows: source dims; cols: result dims
  std::vector<int64_t> c;
};
std::optional<Affine> as_affine(const IndexMap& m, int result_rank);

// ---- Tensor expressions ----

enum class RedOp : uint8_t { Sum, Prod, Max, Min, ArgMax, ArgMin };
std::string_view red_name(RedOp op);
std::optional<RedOp> red_from_name(std::string_view s);
inline bool red_is_arg(RedOp op) { return op == RedOp::ArgMax || op == RedOp::ArgMin; }

struct ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

struct NameE {
  std::string name;
};
struct MapE {
  Lambda fn;
  std::vector<Expr> args;
};
struct ViewE {
  Expr src;
  IndexMap map;
};
struct RedE {
  RedOp op;
  Const init;
  Shape extents;  ///< the trailing dims of src that are reduced
  Expr src;
};
struct IotaE {
  int dim;
};
struct FullE {
  Const value;
};
/// Uniform values in [0, 1) from a counter-based generator keyed by `key`
/// and the element's flat index (CSE must never merge two of them).
struct RandE {
  uint64_t key;
};
struct LetE {
  std::string name;
  Expr value;
  Expr body;
};
using ExprPayload = std::variant<NameE, MapE, ViewE, RedE, IotaE, FullE, RandE, LetE>;

struct ExprNode {
  TensorType type;
  ExprPayload p;
  SourceLoc loc;
  size_t hash = 0;
};

/// Builds a node and computes its structural hash. Types must already be
/// checked (the front end and the transforms do that).
Expr make_expr(TensorType type, ExprPayload p, SourceLoc loc = {});
bool expr_equal(const Expr& a, const Expr& b);

/// The value of rand(key) at a flat index, as a double in [0, 1) with 24
/// random bits (exactly representable in every float dtype but f16/bf16,
/// which round it).
double rand_value(uint64_t key, int64_t flat);

/// Names an expression reads (free names, including those of index loads).
void collect_free_names(const Expr& e, std::vector<std::string>& out);
/// Whether evaluating the expression may raise ⊥ (integer division by zero,
/// indirect or non-affine index maps, which are checked at run time).
bool expr_may_fail(const Expr& e);

// ---- Programs ----

struct Input {
  std::string name;
  TensorType type;
  SourceLoc loc;
};
struct Binding {
  std::string name;
  Expr expr;
  SourceLoc loc;
};
struct Program {
  std::vector<Input> inputs;
  std::vector<Binding> bindings;
  std::vector<std::string> outputs;
  std::string file;  ///< where it was read from, for messages

  /// Type of an input or binding by name, or nullptr.
  const TensorType* type_of(const std::string& name) const;
};

}  // namespace stax::sem
