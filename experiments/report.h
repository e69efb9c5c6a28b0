// `stax experiment all`: one report over the numbered items of
// sections 5 and 6 of the text. One table of claims (report_claims_5.cpp,
// report_claims_6.cpp), each with the text's claim, the value we expect from
// it, the command that reproduces the row alone, and a function computing
// what we get; one reviewed list of known discrepancies (report.cpp), each
// with its reason. Writes DIR/REPORT.md and DIR/REPORT.json (deterministic,
// timings in their own section), figures under DIR/figures/, and the outputs
// of the experiments it runs under DIR/NAME/.
#pragma once

#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "experiments/experiments.h"

namespace stax::experiments {

/// What a claim's function computed.
struct ClaimOutcome {
  std::string ours;           ///< what we computed, compared with ReportClaim::expected
  std::string not_checkable;  ///< non-empty: the row is not checkable, and why
  std::string note;           ///< how it was computed, caveats
};

/// Shared by the claims of one run: where to write, the quick flag, and the
/// experiments already run (name -> exit code and the rows of their CSV).
struct ReportContext {
  Options opt;              ///< out_dir is the report's DIR
  std::string figures_dir;  ///< DIR/figures
  std::map<std::string, int> experiment_rc;
  std::map<std::string, std::vector<std::vector<std::string>>> experiment_rows;
  /// Runs a registered experiment once (output under DIR/NAME/, log kept
  /// out of the report) and returns its exit code; its CSV rows (when it
  /// writes `NAME/NAME.csv` with a status column) go to experiment_rows.
  int run_experiment(const std::string& name);
};

struct ReportClaim {
  std::string id;        ///< row id, e.g. "theorem-5.1"; `--row ID` runs it alone
  std::string number;    ///< the text's number, e.g. "Theorem 5.1"
  std::string section;   ///< "5.2"
  std::string claim;     ///< the text's claim, quoted or paraphrased
  std::string expected;  ///< the value the claim predicts, as `ours` should read
  std::string how;       ///< the library call / stax command behind it
  std::function<ClaimOutcome(ReportContext&)> compute;
};

struct KnownDiscrepancy {
  std::string id;      ///< the row
  std::string reason;  ///< why the mismatch is explained, not a bug
};

const std::vector<ReportClaim>& claims_section5();
const std::vector<ReportClaim>& claims_section6();
/// The one reviewed list: rows whose mismatch does not fail the run.
const std::vector<KnownDiscrepancy>& known_discrepancies();

struct ReportOptions {
  /// Test hook and `--expect-override ROW=VALUE`: replaces a row's expected value.
  std::map<std::string, std::string> expect_override;
  /// Non-empty: run only these rows (`--row ID`).
  std::vector<std::string> only;
};

/// Runs every claim (or the selected ones), writes DIR/REPORT.md,
/// DIR/REPORT.json and the figures; returns 0, 1 when a row is a mismatch
/// that the known list does not explain (the log names it), 2 on a usage or
/// I/O error (an unknown row id in `only` or `expect_override`).
int report_all(const Options& o, const ReportOptions& ro, std::ostream& log);

/// The summary line, e.g. "38 match, 1 mismatch (1 known), 3 not checkable".
std::string report_summary(int match, int mismatch, int known, int not_checkable);

// Helpers shared by the claim files.
std::string join(const std::vector<std::string>& v, const std::string& sep);
/// Writes DIR/figures/NAME.dot and runs dot -Tpng; returns a note ("" when drawn).
std::string run_dot(const std::string& dir, const std::string& name, const std::string& dot);

}  // namespace stax::experiments
