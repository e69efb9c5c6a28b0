// Fuzz target: the `.stx` parser and type checker, and the printer's round
// trip. A program that parses prints to text that parses again and prints to
// the same text; a malformed one gets a diagnostic with a line and column.
#include <cstdlib>
#include <variant>

#include "fuzz/fuzz_target.h"
#include "semantics/parser.h"
#include "semantics/printer.h"

using namespace stax;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::as_text(data, size);
  sem::ParseResult r = sem::parse_program(text, "<fuzz>");
  if (const auto* d = std::get_if<sem::Diag>(&r)) {
    if (d->loc.line < 1 || d->loc.col < 1 || d->message.empty()) fuzz::fail("a diagnostic without a location", d->str());
    return 0;
  }
  std::string printed = sem::print_program(std::get<sem::Program>(r));
  // The smoke tests' wrong case (tests/fuzz/selftest.sh): a seeded printer bug.
  static const bool seeded_bug = std::getenv("STAX_FUZZ_SELFTEST") != nullptr;
  if (seeded_bug) printed += "let\n";
  sem::ParseResult again = sem::parse_program(printed, "<printed>");
  if (const auto* d = std::get_if<sem::Diag>(&again))
    fuzz::fail("the printed program does not parse: " + d->str(), printed);
  std::string twice = sem::print_program(std::get<sem::Program>(again));
  if (twice != printed) fuzz::fail("printing is not a fixed point", printed + "\n---- printed again:\n" + twice);
  return 0;
}
