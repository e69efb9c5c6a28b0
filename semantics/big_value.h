// One value of the multiprecision domains (Real: an MPFR number; enclosures:
// an MPFI interval) for float tags, or an exact integer for int/bool tags.
// `Ops` names the library's init/copy/swap/clear for the float part.
#pragma once

#include <cstdint>

namespace stax::sem {

template <class Ops>
struct BigValue {
  typename Ops::type f;
  int64_t i = 0;
  explicit BigValue(long prec = 256) { Ops::init(f, prec); }
  BigValue(const BigValue& o) : i(o.i) { Ops::init_copy(f, o.f); }
  BigValue(BigValue&& o) noexcept : i(o.i) {
    Ops::init(f, Ops::prec(o.f));
    Ops::swap(f, o.f);
  }
  BigValue& operator=(const BigValue& o) {
    Ops::set(f, o.f);
    i = o.i;
    return *this;
  }
  BigValue& operator=(BigValue&& o) noexcept {
    Ops::swap(f, o.f);
    i = o.i;
    return *this;
  }
  ~BigValue() { Ops::clear(f); }
};

}  // namespace stax::sem
