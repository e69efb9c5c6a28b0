// Deterministic random program generator (docs/design.md §2, §6): well-typed `.stx`
// programs that exercise what the exact transforms rewrite (inline, realize,
// CSE, DCE, view composition, map fusion, loop merging). The parser is the
// type checker: every generated text must parse, and the same seed and options
// always give the same text on every platform (splitmix64, no std
// distributions).
#pragma once

#include <cstdint>
#include <string>

#include "semantics/ir.h"

namespace stax::oracle {

struct GenOptions {
  int max_bindings = 6;      ///< top-level bindings (plus index helpers and duplicates)
  int max_rank = 3;          ///< rank of inputs and bindings; reduction operands may have one more dim
  int64_t max_extent = 6;    ///< keep programs small: one check in milliseconds
  int max_lambda_depth = 3;  ///< nesting of scalar ops inside a lambda
  bool allow_half = true;    ///< f16/bf16
  bool allow_int = true;     ///< i32/i64 values, incl. div/mod/floordiv that may fail (⊥)
  bool allow_gather = true;  ///< indirect loads: in range, negative (wrapping), out of range
  bool allow_reduce = true;  ///< red(sum|prod|max|min|argmax|argmin, ...)
  bool allow_let_in = true;  ///< `let x = e in body` expressions
  /// rand(dtype, shape, key) leaves. Off by default: `normalize` does not
  /// bring a bare rand binding to kernel normal form (transforms property
  /// test); the fuzz campaigns turn it on (oracle/fuzz.h).
  bool allow_rand = false;
  /// Index maps whose intermediates exceed 2^31 (e.g. `(i*65537*65537) % n`).
  bool allow_wide_index = true;
};

/// A random well-typed program, as .stx text; the same (seed, options) always
/// gives the same text. Every tensor has at most ~300 elements.
std::string generate_program_text(uint64_t seed, const GenOptions& opt = {});

/// The same, parsed. Aborts (STAX_CHECK, with the text) if the parser rejects
/// it: that is a generator bug.
sem::Program generate_program(uint64_t seed, const GenOptions& opt = {});

}  // namespace stax::oracle
