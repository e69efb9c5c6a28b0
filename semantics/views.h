// View sugar (docs/design.md §2): permute, slice, expand, reshape, unsqueeze, squeeze
// and gather expand into index maps when parsed (Prop. 6.2 for the affine
// ones, 6.4 for reshape's floor/mod form), and are recognised again by the
// printer so that the text stays readable.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <variant>

#include "semantics/interval.h"
#include "semantics/ir.h"

namespace stax::sem {

struct ViewShape {
  Shape shape;
  IndexMap map;
};
/// Each returns the view's shape and index map, or a message saying what was
/// expected.
using ViewResult = std::variant<ViewShape, std::string>;

ViewResult expand_permute(const Shape& src, const std::vector<int64_t>& perm);
ViewResult expand_slice(const Shape& src, int64_t dim, int64_t start, int64_t stop, int64_t step);
ViewResult expand_expand(const Shape& src, const Shape& shape);
ViewResult expand_reshape(const Shape& src, const Shape& shape);
ViewResult expand_unsqueeze(const Shape& src, int64_t dim);
ViewResult expand_squeeze(const Shape& src, int64_t dim);
ViewResult expand_gather(const Shape& src, int64_t dim, const std::string& index_name, const Shape& index_shape);

/// A recognised sugar form: its keyword and its text after the operand,
/// e.g. {"permute", ", [1, 0])"}. `index_shape` resolves a gather's index
/// tensor shape by name.
struct ViewSugar {
  std::string keyword;
  std::string rest;
};
std::optional<ViewSugar> recognise_view_sugar(
    const Shape& src, const Shape& out, const IndexMap& map,
    const std::function<const Shape*(const std::string&)>& index_shape);

/// Interval of an index expression over the box [0, extents) (Def. 6.4);
/// loads are [-inf, +inf], saturated to int64 bounds.
Interval iexpr_range(const IExpr& e, const Shape& extents);
/// Whether every component of the map is statically within [0, src) (exact
/// for affine maps, conservative otherwise).
bool view_statically_in_bounds(const Shape& src, const Shape& out, const IndexMap& map);

}  // namespace stax::sem
