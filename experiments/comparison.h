// A comparison of the text's figures with ours, one row per figure: what,
// the text's value, ours, and match / mismatch (or another status, e.g.
// "not applicable: ...", which is neither). Written as CSV and Markdown
// under OUT/NAME/ and summarized on the log; shared by the section-5
// experiments (autodiff and remat).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "experiments/experiments.h"

namespace stax::experiments {

struct ComparisonRow {
  std::string item;      ///< the graph, node or value the figure belongs to
  std::string quantity;  ///< what is compared
  std::string text;      ///< the text's value (or claim)
  std::string ours;      ///< ours
  std::string status;    ///< "match", "mismatch" or another word (not counted either way)
  std::string note;
};

inline ComparisonRow compare_row(std::string item, std::string quantity, std::string text, std::string ours, bool match,
                                 std::string note = "") {
  return {std::move(item), std::move(quantity), std::move(text), std::move(ours), match ? "match" : "mismatch",
          std::move(note)};
}

/// Writes OUT/NAME/FILE.csv and FILE.md (FILE: NAME with '-' as '_'), prints
/// the counts and every row that is not a match; returns 0, 1 when a row is
/// a mismatch, 2 when a file cannot be written.
int write_comparison(const Options& o, const std::string& name, const std::string& title, const std::string& preamble,
                     const std::vector<ComparisonRow>& rows, std::ostream& log);

}  // namespace stax::experiments
