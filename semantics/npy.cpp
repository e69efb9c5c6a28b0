#include "semantics/npy.h"

#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

namespace stax::sem {

namespace {

bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

std::optional<DType> dtype_of_descr(const std::string& d, bool bf16, std::string& err) {
  if (d.size() < 3) {
    err = "unsupported descr '" + d + "'";
    return std::nullopt;
  }
  char order = d[0];
  std::string code = d.substr(1);
  if (order == '>' && code != "b1" && code != "u1" && code != "i1") {
    err = "big-endian arrays are not supported (descr '" + d + "')";
    return std::nullopt;
  }
  if (bf16) {
    if (code == "u2") return DType::BF16;
    err = "a .bf16.npy file must hold '<u2' bits, got '" + d + "'";
    return std::nullopt;
  }
  if (code == "f4") return DType::F32;
  if (code == "f8") return DType::F64;
  if (code == "f2") return DType::F16;
  if (code == "i4") return DType::I32;
  if (code == "i8") return DType::I64;
  if (code == "b1") return DType::Bool;
  if (code == "u2") err = "'<u2' arrays are read as bf16 only from files named *.bf16.npy";
  else err = "unsupported dtype '" + d + "' (supported: f4 f8 f2 i4 i8 b1, and u2 as bf16)";
  return std::nullopt;
}

std::string descr_of(DType t) {
  switch (t) {
    case DType::F32: return "<f4";
    case DType::F64: return "<f8";
    case DType::F16: return "<f2";
    case DType::BF16: return "<u2";
    case DType::I32: return "<i4";
    case DType::I64: return "<i8";
    case DType::Bool: return "|b1";
  }
  return "?";
}

// Finds the value text after 'key': in the header dict.
std::optional<std::string> dict_value(const std::string& h, const std::string& key) {
  size_t k = h.find("'" + key + "'");
  if (k == std::string::npos) return std::nullopt;
  size_t c = h.find(':', k);
  if (c == std::string::npos) return std::nullopt;
  size_t b = h.find_first_not_of(" ", c + 1);
  if (b == std::string::npos) return std::nullopt;
  if (h[b] == '\'') {
    size_t e = h.find('\'', b + 1);
    if (e == std::string::npos) return std::nullopt;
    return h.substr(b + 1, e - b - 1);
  }
  if (h[b] == '(') {
    size_t e = h.find(')', b);
    if (e == std::string::npos) return std::nullopt;
    return h.substr(b, e - b + 1);
  }
  size_t e = h.find_first_of(",}", b);
  if (e == std::string::npos) return std::nullopt;
  std::string v = h.substr(b, e - b);
  v.erase(v.find_last_not_of(' ') + 1);
  return v;
}

}  // namespace

std::string npy_suffix(DType t) { return t == DType::BF16 ? ".bf16.npy" : ".npy"; }

std::variant<Tensor, std::string> parse_npy(const std::string& s, bool bf16) {
  if (s.size() < 10 || s.compare(0, 6, "\x93NUMPY") != 0) return std::string("not a .npy file (bad magic)");
  unsigned major = static_cast<unsigned char>(s[6]);
  size_t hlen, hstart;
  if (major == 1) {
    hlen = size_t(static_cast<unsigned char>(s[8])) | size_t(static_cast<unsigned char>(s[9])) << 8;
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (s.size() < 12) return std::string("truncated .npy header");
    hlen = 0;
    for (int i = 0; i < 4; ++i) hlen |= size_t(static_cast<unsigned char>(s[size_t(8 + i)])) << (8 * i);
    hstart = 12;
  } else {
    return "unsupported .npy format version " + std::to_string(major);
  }
  if (hstart + hlen > s.size()) return std::string("truncated .npy header");
  std::string h = s.substr(hstart, hlen);
  auto descr = dict_value(h, "descr");
  auto fortran = dict_value(h, "fortran_order");
  auto shape_txt = dict_value(h, "shape");
  if (!descr || !fortran || !shape_txt) return "malformed .npy header: " + h;
  std::string err;
  auto dt = dtype_of_descr(*descr, bf16, err);
  if (!dt) return err;
  Shape shape;
  {
    std::string t = shape_txt->substr(1, shape_txt->size() - 2);
    std::stringstream ss(t);
    std::string item;
    while (std::getline(ss, item, ',')) {
      size_t b = item.find_first_not_of(' ');
      if (b == std::string::npos) continue;
      item = item.substr(b);
      size_t e = item.find_last_not_of(" L");
      item = item.substr(0, e + 1);
      char* end = nullptr;
      long long v = std::strtoll(item.c_str(), &end, 10);
      if (*end != '\0' || v < 0 || v > (1ll << 40)) return "malformed shape in .npy header: " + *shape_txt;
      shape.push_back(v);
    }
  }
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d != 0 && n > (int64_t(1) << 40) / d) return std::string("array too large");
    n *= d;
  }
  size_t bytes = size_t(n) * size_t(dtype_bytes(*dt));
  size_t data_start = hstart + hlen;
  if (s.size() - data_start != bytes)
    return "data size mismatch: header says " + std::to_string(bytes) + " bytes, file has " +
           std::to_string(s.size() - data_start);
  Tensor t(*dt, shape);
  if (*fortran == "True" && shape.size() > 1) {
    // Column-major to row-major.
    size_t eb = size_t(dtype_bytes(*dt));
    std::vector<int64_t> idx(shape.size(), 0);
    for (int64_t f = 0; f < n; ++f) {
      int64_t c = 0;
      for (size_t k = 0; k < shape.size(); ++k) c = c * shape[k] + idx[k];
      std::memcpy(t.data.data() + size_t(c) * eb, s.data() + data_start + size_t(f) * eb, eb);
      for (size_t k = 0; k < shape.size(); ++k) {
        if (++idx[k] < shape[k]) break;
        idx[k] = 0;
      }
    }
  } else if (*fortran != "False" && *fortran != "True") {
    return "malformed fortran_order in .npy header: " + *fortran;
  } else if (bytes) {
    std::memcpy(t.data.data(), s.data() + data_start, bytes);
  }
  if (*dt == DType::Bool)
    for (auto& b : t.data) b = b != 0;
  return t;
}

std::variant<Tensor, std::string> read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return path + ": cannot open file";
  std::stringstream ss;
  ss << in.rdbuf();
  auto r = parse_npy(ss.str(), ends_with(path, ".bf16.npy"));
  if (auto* e = std::get_if<std::string>(&r)) return path + ": " + *e;
  return r;
}

std::string format_npy(const Tensor& t) {
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(t.shape[i]);
  if (t.shape.size() == 1) shape += ",";
  shape += ")";
  std::string h = "{'descr': '" + descr_of(t.dtype) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + h.size() + 1;
  h += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(h.size() & 0xff);
  out += char((h.size() >> 8) & 0xff);
  out += h;
  out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size());
  return out;
}

std::optional<std::string> write_npy(const std::string& path, const Tensor& t) {
  std::ofstream out(path, std::ios::binary);
  if (!out) return path + ": cannot write file";
  std::string s = format_npy(t);
  out.write(s.data(), std::streamsize(s.size()));
  if (!out) return path + ": write failed";
  return std::nullopt;
}

}  // namespace stax::sem
