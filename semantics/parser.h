// Parser and type checker for the `.stx` text format (docs/design.md §2). Malformed
// input yields a Diag with file:line:col saying what was expected; it never
// crashes or hangs (nesting depth and literal sizes are bounded).
#pragma once

#include <string>
#include <string_view>
#include <variant>

#include "semantics/ir.h"

namespace stax::sem {

using ParseResult = std::variant<Program, Diag>;

ParseResult parse_program(std::string_view text, std::string file = "<input>");
/// Whether `name` is a keyword or a dtype name, which a binding or an input
/// cannot be called (the graph format allows such names; the lowering
/// renames them when it prints a program).
bool is_reserved_word(const std::string& name);

/// Reads a file; a missing file is a Diag at 0:0.
ParseResult parse_file(const std::string& path);

}  // namespace stax::sem
