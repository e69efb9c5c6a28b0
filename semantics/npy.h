// NumPy `.npy` files in and out (format versions 1.0-3.0, little-endian, C or
// Fortran order). bf16 travels as raw '<u2' bits in a file named *.bf16.npy.
#pragma once

#include <string>
#include <variant>

#include "semantics/tensor.h"

namespace stax::sem {

/// Reads a tensor, or returns a message saying what is wrong with the file.
std::variant<Tensor, std::string> read_npy(const std::string& path);
std::variant<Tensor, std::string> parse_npy(const std::string& bytes, bool bf16);
/// Writes a tensor; returns an error message on failure.
std::optional<std::string> write_npy(const std::string& path, const Tensor& t);
std::string format_npy(const Tensor& t);
/// The file name suffix for a dtype: ".bf16.npy" for bf16, ".npy" otherwise.
std::string npy_suffix(DType t);

}  // namespace stax::sem
