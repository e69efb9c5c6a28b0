#include "semantics/npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <sstream>
#include <string_view>

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

namespace {

/// What a .npy header says about the data after it.
struct NpyHeader {
  DType dtype;
  Shape shape;
  bool fortran = false;
  size_t data_start = 0;  ///< offset of the data in the file
  size_t bytes = 0;       ///< data bytes the header announces
};

/// Offset of the end of the header, from the first 12 bytes (or fewer for
/// version 1), or an error message.
std::variant<size_t, std::string> header_end(std::string_view s, size_t& hstart) {
  if (s.size() < 10 || s.compare(0, 6, "\x93NUMPY") != 0) return std::string("not a .npy file (bad magic)");
  unsigned major = static_cast<unsigned char>(s[6]);
  size_t hlen;
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
  return hstart + hlen;
}

/// Parses the header at the start of `s`, which holds at least the whole
/// header; `file_size` is the size of the whole file.
std::variant<NpyHeader, std::string> parse_header(std::string_view s, size_t file_size, bool bf16) {
  size_t hstart = 0;
  auto end = header_end(s, hstart);
  if (auto* e = std::get_if<std::string>(&end)) return *e;
  size_t hend = std::get<size_t>(end);
  if (hend > file_size || hend > s.size()) return std::string("truncated .npy header");
  std::string h(s.substr(hstart, hend - hstart));
  auto descr = dict_value(h, "descr");
  auto fortran = dict_value(h, "fortran_order");
  auto shape_txt = dict_value(h, "shape");
  if (!descr || !fortran || !shape_txt) return "malformed .npy header: " + h.substr(0, h.find_last_not_of(" \n") + 1);
  std::string err;
  auto dt = dtype_of_descr(*descr, bf16, err);
  if (!dt) return err;
  NpyHeader r{*dt, {}, false, hend, 0};
  if (shape_txt->size() < 2 || shape_txt->front() != '(' || shape_txt->back() != ')')
    return "malformed shape in .npy header (not a tuple): " + *shape_txt;
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
      char* endp = nullptr;
      long long v = std::strtoll(item.c_str(), &endp, 10);
      if (*endp != '\0' || v < 0 || v > (1ll << 40)) return "malformed shape in .npy header: " + *shape_txt;
      r.shape.push_back(v);
    }
  }
  int64_t n = 1;
  for (int64_t d : r.shape) {
    if (d != 0 && n > (int64_t(1) << 40) / d) return std::string("array too large");
    n *= d;
  }
  r.bytes = size_t(n) * size_t(dtype_bytes(*dt));
  if (file_size - hend != r.bytes)
    return "data size mismatch: header says " + std::to_string(r.bytes) + " bytes, file has " +
           std::to_string(file_size - hend);
  if (*fortran != "False" && *fortran != "True") return "malformed fortran_order in .npy header: " + *fortran;
  r.fortran = *fortran == "True" && r.shape.size() > 1;
  return r;
}

/// Column-major `src` to the row-major bytes of `t`.
void from_fortran_order(Tensor& t, const uint8_t* src) {
  size_t eb = size_t(dtype_bytes(t.dtype));
  int64_t n = t.size();
  std::vector<int64_t> idx(t.shape.size(), 0);
  for (int64_t f = 0; f < n; ++f) {
    int64_t c = 0;
    for (size_t k = 0; k < t.shape.size(); ++k) c = c * t.shape[k] + idx[k];
    std::memcpy(t.data.data() + size_t(c) * eb, src + size_t(f) * eb, eb);
    for (size_t k = 0; k < t.shape.size(); ++k) {
      if (++idx[k] < t.shape[k]) break;
      idx[k] = 0;
    }
  }
}

void normalise_bools(Tensor& t) {
  if (t.dtype == DType::Bool)
    for (auto& b : t.data) b = b != 0;
}

/// Reads `n` bytes at `offset`, in as few calls as the kernel allows.
bool pread_all(int fd, void* dst, size_t n, size_t offset) {
  auto* p = static_cast<uint8_t*>(dst);
  while (n) {
    ssize_t r = ::pread(fd, p, n, off_t(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r, offset += size_t(r), n -= size_t(r);
  }
  return true;
}

/// Closes the descriptor on every path out of read_npy and write_npy.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

/// The header of a version 1.0 file for `t`, padded so that the data starts
/// on a 64-byte boundary (as NumPy writes it).
std::string npy_header(const Tensor& t) {
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
  return out + h;
}

}  // namespace

std::variant<Tensor, std::string> parse_npy(const std::string& s, bool bf16) {
  auto hr = parse_header(s, s.size(), bf16);
  if (auto* e = std::get_if<std::string>(&hr)) return *e;
  const NpyHeader& h = std::get<NpyHeader>(hr);
  Tensor t = Tensor::uninitialized(h.dtype, h.shape);
  const auto* src = reinterpret_cast<const uint8_t*>(s.data()) + h.data_start;
  if (h.fortran) from_fortran_order(t, src);
  else if (h.bytes) std::memcpy(t.data.data(), src, h.bytes);
  normalise_bools(t);
  return t;
}

// The data goes from the file straight into the tensor's (uninitialised,
// huge-page) buffer in one read: no stream buffers, no intermediate copy.
std::variant<Tensor, std::string> read_npy(const std::string& path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  struct stat st;
  if (f.fd < 0 || ::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) return path + ": cannot open file";
  size_t size = size_t(st.st_size);
  bool bf16 = ends_with(path, ".bf16.npy");
  std::string head(std::min<size_t>(size, 4096), '\0');
  if (!pread_all(f.fd, head.data(), head.size(), 0)) return path + ": read failed";
  size_t hstart = 0;
  auto end = header_end(head, hstart);
  if (auto* n = std::get_if<size_t>(&end); n && *n > head.size() && *n <= size) {
    head.resize(*n);
    if (!pread_all(f.fd, head.data(), head.size(), 0)) return path + ": read failed";
  }
  auto hr = parse_header(head, size, bf16);
  if (auto* e = std::get_if<std::string>(&hr)) return path + ": " + *e;
  const NpyHeader& h = std::get<NpyHeader>(hr);
  Tensor t = Tensor::uninitialized(h.dtype, h.shape);
  if (h.fortran) {
    Bytes raw(h.bytes);
    if (!pread_all(f.fd, raw.data(), h.bytes, h.data_start)) return path + ": read failed";
    from_fortran_order(t, raw.data());
  } else if (!pread_all(f.fd, t.data.data(), h.bytes, h.data_start)) {
    return path + ": read failed";
  }
  normalise_bools(t);
  return t;
}

std::string format_npy(const Tensor& t) {
  std::string out = npy_header(t);
  out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size());
  return out;
}

// Header and data in one writev, straight from the tensor's buffer.
std::optional<std::string> write_npy(const std::string& path, const Tensor& t) {
  Fd f{::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)};
  if (f.fd < 0) return path + ": cannot write file";
  std::string h = npy_header(t);
  iovec iov[2] = {{h.data(), h.size()}, {const_cast<uint8_t*>(t.data.data()), t.data.size()}};
  size_t k = 0;
  while (k < 2) {
    ssize_t w = ::writev(f.fd, iov + k, int(2 - k));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return path + ": write failed";
    size_t left = size_t(w);
    while (k < 2 && left >= iov[k].iov_len) left -= iov[k].iov_len, ++k;
    if (k < 2) {  // a partial write: resume inside iov[k]
      iov[k].iov_base = static_cast<char*>(iov[k].iov_base) + left;
      iov[k].iov_len -= left;
    }
  }
  int rc = ::close(f.fd);
  f.fd = -1;
  if (rc != 0) return path + ": write failed";
  return std::nullopt;
}

}  // namespace stax::sem
