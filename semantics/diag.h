// User-facing diagnostics (errors returned with file:line:col, never
// thrown past the CLI) and internal invariant checks.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

namespace stax::sem {

struct SourceLoc {
  int line = 0;
  int col = 0;
};

struct Diag {
  std::string file;
  SourceLoc loc;
  std::string message;
  std::string str() const {
    return file + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col) + ": error: " + message;
  }
};

/// Thrown inside the front end only; converted to a Diag at its API boundary.
struct DiagError {
  SourceLoc loc;
  std::string message;
};

namespace detail {
struct CheckFailer {
  const char* file;
  int line;
  const char* cond;
  std::ostringstream os;
  ~CheckFailer() {
    std::fprintf(stderr, "%s:%d: internal error: check '%s' failed: %s\n", file, line, cond, os.str().c_str());
    std::abort();
  }
};
}  // namespace detail

}  // namespace stax::sem

/// Internal invariant: aborts with context. `STAX_CHECK(c) << "msg";`
#define STAX_CHECK(c) \
  if (c) {            \
  } else              \
    ::stax::sem::detail::CheckFailer{__FILE__, __LINE__, #c, {}}.os
