#include "backends/normal_form.h"

#include "semantics/printer.h"
#include "transforms/transform.h"

namespace stax::backends {

std::optional<sem::Program> exact_normal_form(const sem::Program& p, std::string* why) {
  const xform::TransformInfo* norm = xform::find_transform("normalize");
  if (!norm) {
    *why = "the normalize transform is not registered";
    return std::nullopt;
  }
  for (const xform::Params& params : {xform::Params{}, xform::Params{{"fuse", "0"}}}) {
    xform::Context ctx;
    xform::Result r = norm->run(p, params, ctx);
    if (r.cls == xform::SemClass::Exact) return std::move(r.program);
  }
  *why = "normalize:fuse=0 is not exact on:\n" + sem::print_program(p);
  return std::nullopt;
}

}  // namespace stax::backends
