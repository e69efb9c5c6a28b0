#include "oracle/shrunk_shapes.h"

#include <cctype>
#include <set>
#include <variant>

#include "semantics/parser.h"
#include "semantics/printer.h"

namespace stax::oracle {

namespace {

bool is_shape_list(std::string_view s) {
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != ',' && c != ' ') return false;
  return true;
}

// Whether the list at text[open] is the axis list of a `permute(x, [...])`
// (axis numbers, not extents). The text is print_program's: one statement a
// line, so the scan stops at the line's start (scanning to the start of the
// text made a program of n bindings cost O(n^2): 100 000 bindings, minutes).
bool is_axis_list(const std::string& text, size_t open) {
  int depth = 0;
  for (size_t i = open; i-- > 0;) {
    if (text[i] == '\n') return false;
    if (text[i] == ')') ++depth;
    else if (text[i] == '(' && depth-- == 0) return i >= 7 && text.compare(i - 7, 7, "permute") == 0;
  }
  return false;
}

// Walks the printed program: calls on_extent for each integer of a bracketed
// list of integers (a shape or reduction extents) and on_const for each other
// integer token that is not part of a float literal or a name.
template <class E, class C>
std::string rewrite_ints(const std::string& text, E on_extent, C on_const) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == '[') {
      size_t close = text.find(']', i);
      if (close != std::string::npos && is_shape_list(std::string_view(text).substr(i + 1, close - i - 1)) &&
          !is_axis_list(text, i)) {
        out += '[';
        for (size_t j = i + 1; j < close;) {
          if (std::isdigit(static_cast<unsigned char>(text[j]))) {
            size_t k = j;
            while (k < close && std::isdigit(static_cast<unsigned char>(text[k]))) ++k;
            out += std::to_string(on_extent(std::stoll(text.substr(j, k - j))));
            j = k;
          } else {
            out += text[j++];
          }
        }
        out += ']';
        i = close + 1;
        continue;
      }
    }
    bool word_start = i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_' ||
                                  text[i - 1] == '.');
    if (std::isdigit(static_cast<unsigned char>(c)) && word_start) {
      size_t k = i;
      while (k < text.size() && (std::isalnum(static_cast<unsigned char>(text[k])) || text[k] == '.')) ++k;
      std::string tok = text.substr(i, k - i);
      bool integer = tok.find_first_not_of("0123456789") == std::string::npos;
      if (integer && tok.size() < 19) on_const(std::stoll(tok));
      out += tok;
      i = k;
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

}  // namespace

std::vector<int64_t> extents_of(const sem::Program& p) {
  std::set<int64_t> seen;
  rewrite_ints(
      sem::print_program(p), [&](int64_t e) { seen.insert(e); return e; }, [](int64_t) {});
  return {seen.begin(), seen.end()};
}

std::optional<sem::Program> shrink_shapes(const sem::Program& p, const std::map<int64_t, int64_t>& sigma,
                                          std::string* why) {
  std::optional<int64_t> tied;
  std::string text = rewrite_ints(
      sem::print_program(p),
      [&](int64_t e) {
        auto it = sigma.find(e);
        return it == sigma.end() ? e : it->second;
      },
      [&](int64_t c) {
        auto it = sigma.find(c);
        if (it != sigma.end() && it->second != c && c > 1) tied = c;
      });
  if (tied) {
    *why = "not shape-generic: a constant " + std::to_string(*tied) + " of an index map or lambda equals an extent";
    return std::nullopt;
  }
  sem::ParseResult r = sem::parse_program(text, "<shrunk>");
  if (auto* d = std::get_if<sem::Diag>(&r)) {
    *why = "not shape-generic: at the shrunk shapes the program does not type-check (" + d->message + ")";
    return std::nullopt;
  }
  return std::get<sem::Program>(std::move(r));
}

Retarget retarget_by(const std::vector<xform::Step>& steps) {
  return [steps](const sem::Program& s) -> std::optional<sem::Program> {
    try {
      xform::Context ctx;
      return xform::run_pipeline(s, steps, ctx).program;
    } catch (const xform::TransformError&) {
      return std::nullopt;
    }
  };
}

}  // namespace stax::oracle
