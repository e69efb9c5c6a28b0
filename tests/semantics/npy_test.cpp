#include <catch2/catch.hpp>
#include <filesystem>

#include "semantics/npy.h"

using namespace stax::sem;

namespace {
Tensor iota_tensor(DType t, Shape s) {
  Tensor x(t, std::move(s));
  for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = uint8_t(i * 7 + 3);
  if (t == DType::Bool)
    for (auto& b : x.data) b &= 1;
  return x;
}
}  // namespace

TEST_CASE("npy round trip for every dtype and rank") {
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64, DType::Bool}) {
    for (Shape s : {Shape{}, Shape{5}, Shape{2, 3}, Shape{2, 0, 4}}) {
      Tensor x = iota_tensor(t, s);
      auto r = parse_npy(format_npy(x), t == DType::BF16);
      REQUIRE(std::holds_alternative<Tensor>(r));
      const Tensor& y = std::get<Tensor>(r);
      CHECK(y.dtype == t);
      CHECK(y.shape == s);
      CHECK(y.data == x.data);
    }
  }
}

TEST_CASE("npy header is 64-byte aligned and names the NumPy dtype") {
  Tensor x = iota_tensor(DType::F16, {3});
  std::string s = format_npy(x);
  size_t hlen = size_t(uint8_t(s[8])) | size_t(uint8_t(s[9])) << 8;
  CHECK((10 + hlen) % 64 == 0);
  CHECK(s.find("'descr': '<f2'") != std::string::npos);
  CHECK(s.find("'shape': (3,)") != std::string::npos);
}

TEST_CASE("bf16 only from files named .bf16.npy") {
  Tensor x = iota_tensor(DType::BF16, {4});
  auto r = parse_npy(format_npy(x), false);
  REQUIRE(std::holds_alternative<std::string>(r));
  CHECK_THAT(std::get<std::string>(r), Catch::Contains("bf16.npy"));
  CHECK(npy_suffix(DType::BF16) == ".bf16.npy");
  CHECK(npy_suffix(DType::F32) == ".npy");
}

TEST_CASE("malformed npy files get a message, never a crash") {
  Tensor x = iota_tensor(DType::F32, {4});
  std::string good = format_npy(x);
  std::vector<std::pair<std::string, std::string>> bad = {
      {"", "bad magic"},
      {"hello world, not numpy", "bad magic"},
      {good.substr(0, 20), "truncated"},
      {good.substr(0, good.size() - 3), "data size mismatch"},
      {good + "xx", "data size mismatch"},
  };
  std::string be = good;
  be.replace(be.find("<f4"), 3, ">f4");
  bad.push_back({be, "big-endian"});
  std::string u8 = good;
  u8.replace(u8.find("<f4"), 3, "<c8");
  bad.push_back({u8, "unsupported dtype"});
  std::string v9 = good;
  v9[6] = 9;
  bad.push_back({v9, "version"});
  std::string noshape = good;
  noshape.replace(noshape.find("'shape'"), 7, "'shapX'");
  bad.push_back({noshape, "malformed"});
  // An empty or untupled shape value (once an uncaught std::out_of_range).
  for (const char* v : {"'shape': , ", "'shape': }", "'shape': 4, "}) {
    std::string s = good;
    size_t a = s.find("'shape'"), b = s.find(')', a) + 3;
    s.replace(a, b - a, v);
    bad.push_back({s, "malformed shape"});
  }
  for (const auto& [bytes, msg] : bad) {
    auto r = parse_npy(bytes, false);
    INFO(msg);
    REQUIRE(std::holds_alternative<std::string>(r));
    CHECK_THAT(std::get<std::string>(r), Catch::Contains(msg));
  }
  auto missing = read_npy("/nonexistent/file.npy");
  REQUIRE(std::holds_alternative<std::string>(missing));
  CHECK_THAT(std::get<std::string>(missing), Catch::Contains("cannot open"));
}

TEST_CASE("fortran-order arrays are transposed into row-major") {
  // A 2x3 array stored column-major: memory 0 3 1 4 2 5 holds rows [0 1 2], [3 4 5].
  Tensor x(DType::I32, {2, 3});
  int32_t colmajor[] = {0, 3, 1, 4, 2, 5};
  std::memcpy(x.data.data(), colmajor, sizeof colmajor);
  std::string s = format_npy(x);
  s.replace(s.find("False"), 5, "True ");
  auto r = parse_npy(s, false);
  REQUIRE(std::holds_alternative<Tensor>(r));
  const Tensor& y = std::get<Tensor>(r);
  for (int i = 0; i < 6; ++i) CHECK(y.as<int32_t>()[i] == i);
}
