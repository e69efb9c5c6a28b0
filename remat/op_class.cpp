#include "remat/op_class.h"

#include <map>
#include <string>

namespace stax::remat {

namespace {

const std::map<std::string, OpClass, std::less<>>& table() {
  static const std::map<std::string, OpClass, std::less<>> t = [] {
    std::map<std::string, OpClass, std::less<>> m;
    auto add = [&](OpClass c, std::initializer_list<const char*> names) {
      for (const char* n : names) m[n] = c;
    };
    add(OpClass::Pointwise,
        {"add.Tensor", "add.Scalar", "sub.Tensor", "sub.Scalar", "mul.Tensor", "mul.Scalar", "div.Tensor",
         "div.Scalar", "pow.Tensor_Scalar", "pow.Tensor_Tensor", "remainder.Tensor", "remainder.Scalar",
         "floor_divide.default", "maximum.default", "minimum.default", "eq.Tensor", "eq.Scalar", "ne.Tensor",
         "ne.Scalar", "lt.Tensor", "lt.Scalar", "le.Tensor", "le.Scalar", "gt.Tensor", "gt.Scalar", "ge.Tensor",
         "ge.Scalar", "where.self", "neg.default", "abs.default", "relu.default", "sigmoid.default", "tanh.default",
         "exp.default", "log.default", "sqrt.default", "rsqrt.default", "erf.default", "log1p.default",
         "log2.default", "log10.default", "expm1.default", "sin.default", "cos.default", "floor.default",
         "clone.default", "alias.default", "contiguous.default", "_to_copy.default", "to.dtype", "full.default",
         "zeros.default", "ones.default", "arange.default", "arange.start", "arange.start_step", "gelu.default",
         "index.Tensor", "gather.default", "scalar_tensor.default",
         // backward-only elementwise operators of joint graphs (Listing 5.2 of the text)
         "gelu_backward.default", "tanh_backward.default", "sigmoid_backward.default",
         "threshold_backward.default"});
    add(OpClass::View, {"t.default", "transpose.int", "permute.default", "expand.default", "view.default",
                        "reshape.default", "_unsafe_view.default", "unsqueeze.default", "squeeze.dim",
                        "squeeze.dims", "squeeze.default", "slice.Tensor", "select.int"});
    add(OpClass::Reduction, {"sum.dim_IntList", "sum.default", "amax.default", "amin.default", "prod.dim_int",
                             "prod.default", "argmax.default", "argmin.default", "mean.dim", "mean.default",
                             "softmax.int", "_softmax.default", "log_softmax.int", "_log_softmax.default",
                             "layer_norm.default", "_softmax_backward_data.default",
                             "_log_softmax_backward_data.default"});
    add(OpClass::Cat, {"cat.default"});
    add(OpClass::Expensive, {"mm.default", "bmm.default", "matmul.default", "addmm.default", "baddbmm.default",
                             "convolution.default", "convolution_backward.default"});
    add(OpClass::Random, {"rand.default", "randn.default", "bernoulli.default", "native_dropout.default"});
    return m;
  }();
  return t;
}

}  // namespace

std::optional<OpClass> op_class(std::string_view op) {
  auto it = table().find(op);
  if (it == table().end()) return std::nullopt;
  return it->second;
}

bool fusible(OpClass producer, OpClass consumer) {
  auto cheap = [](OpClass c) { return c == OpClass::Pointwise || c == OpClass::View || c == OpClass::Reduction; };
  if (consumer == OpClass::Cat) return cheap(producer);
  return cheap(producer) && cheap(consumer);
}

}  // namespace stax::remat
