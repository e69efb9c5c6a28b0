// The golden bad-input cases (tests/golden/bad_input, docs/bad-input.md):
// reading a case's stated verdict, running its command against the `stax`
// binary under a timeout, and judging the outcome. A case states, in its
// first line, the exit code and the first line of one output stream:
//
//   # expect: exit 2, stderr: {case}:2:21: error: unknown name 'q'
//   # run: stax run {case} --random-inputs 1
//
// `{case}` is the case's path relative to tests/golden (the folder the
// command runs in); a text ending in "..." is a prefix (for messages with
// machine-dependent text). A .stx or .case file carries these two lines
// itself; a file that cannot (.npy, .json) has a sidecar FILE.expect whose
// `{case}` is FILE. The existing graph goldens (tests/golden/compiler/*.json,
// tests/golden/autodiff/bad_*.json) state their verdict in their "expect"
// field: `stax lower` (or `stax grad --wrt`) exits 2 and its stderr's first
// line is "{case}: error: ..." containing that text.
#pragma once

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

namespace stax::test::bad_input {

namespace fs = std::filesystem;

enum class Match { Exact, Prefix, Contains };

struct Case {
  fs::path file;        ///< the file that states the verdict (the case, or its sidecar)
  std::string subject;  ///< {case}: the malformed file, relative to the golden root
  int exit = 0;
  std::string stream;  ///< "stdout" or "stderr"
  std::string text;    ///< expected first line of `stream` ({case} expanded)
  Match match = Match::Exact;
  std::string args;  ///< the command line after "stax " ({case} expanded)
};

struct Outcome {
  int code = -1;  ///< the exit code; 124 a timeout, 128+N a signal N
  std::string out, err;
};

inline std::string slurp_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t k = s.find(from); k != std::string::npos; k = s.find(from, k + to.size())) s.replace(k, from.size(), to);
  return s;
}

inline std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

/// Parses the two header lines of `file`; `subject` is {case}. Returns the
/// case, or a message saying what is wrong with the header.
inline std::variant<Case, std::string> parse_header(const fs::path& file, const std::string& subject) {
  std::istringstream in(slurp_file(file));
  std::string l1, l2;
  std::getline(in, l1);
  std::getline(in, l2);
  static const std::regex expect_re(R"(^# expect: exit ([0-9]), (stdout|stderr): (.+)$)");
  static const std::regex run_re(R"(^# run: stax (.+)$)");
  std::smatch m1, m2;
  if (!std::regex_match(l1, m1, expect_re))
    return file.string() + ": line 1 is not '# expect: exit N, stdout|stderr: TEXT'";
  if (!std::regex_match(l2, m2, run_re)) return file.string() + ": line 2 is not '# run: stax ARGS'";
  Case c;
  c.file = file;
  c.subject = subject;
  c.exit = std::stoi(m1[1].str());
  c.stream = m1[2].str();
  c.text = replace_all(m1[3].str(), "{case}", subject);
  if (c.text.size() > 3 && c.text.compare(c.text.size() - 3, 3, "...") == 0) {
    c.text.resize(c.text.size() - 3);
    c.match = Match::Prefix;
  }
  c.args = replace_all(m2[1].str(), "{case}", subject);
  return c;
}

/// A graph golden with an "expect" field: `stax lower` (or, with "wrt",
/// `stax grad --wrt`) exits 2 with "{case}: error: ..." containing it.
inline std::variant<Case, std::string> parse_graph_golden(const fs::path& file, const std::string& subject) {
  std::string text = slurp_file(file);
  static const std::regex expect_re(R"re("expect": "([^"]*)")re"), wrt_re(R"re("wrt": "([^"]*)")re");
  std::smatch m, w;
  if (!std::regex_search(text, m, expect_re)) return file.string() + ": no \"expect\" field";
  Case c;
  c.file = file;
  c.subject = subject;
  c.exit = 2;
  c.stream = "stderr";
  c.text = m[1].str();
  c.match = Match::Contains;
  c.args = std::regex_search(text, w, wrt_re) ? "grad " + subject + " --wrt " + w[1].str() : "lower " + subject;
  return c;
}

/// The cases of golden folder `dir` (relative to `root`): each .stx/.case
/// file, each FILE.expect sidecar, and, in the graph folders, each JSON file
/// with an "expect" field. Any other file directly in `dir` (other than
/// README.md) has no stated verdict: an error.
inline std::vector<std::variant<Case, std::string>> list_cases(const fs::path& root, const std::string& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(root / dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<std::variant<Case, std::string>> out;
  for (const fs::path& f : files) {
    std::string name = f.filename().string(), ext = f.extension().string();
    std::string rel = dir + "/" + name;
    if (name == "README.md") continue;
    if (ext == ".stx" || ext == ".case") {
      out.push_back(parse_header(f, rel));
    } else if (ext == ".expect") {
      std::string subject = rel.substr(0, rel.size() - 7);
      if (!fs::exists(root / subject)) out.push_back(f.string() + ": the sidecar's file " + subject + " is missing");
      else out.push_back(parse_header(f, subject));
    } else if (ext == ".json" && slurp_file(f).find("\"expect\": \"") != std::string::npos) {
      out.push_back(parse_graph_golden(f, rel));
    } else if (!fs::exists(fs::path(f.string() + ".expect"))) {
      // Graph folders also hold good goldens (.txt, JSON without "expect").
      if (dir.rfind("bad_input", 0) == 0) out.push_back(f.string() + ": no stated verdict (add " + name + ".expect)");
    }
  }
  return out;
}

/// Runs `binary ARGS` in `root` (a shell command line), killed after
/// `timeout_s` seconds.
inline Outcome run_case(const std::string& binary, const fs::path& root, const std::string& args, int timeout_s,
                        const fs::path& scratch) {
  fs::path o = scratch / "case_stdout.txt", e = scratch / "case_stderr.txt";
  std::string cmd = "cd '" + root.string() + "' && timeout -k 5 " + std::to_string(timeout_s) + " '" + binary +
                    "' " + args + " >'" + o.string() + "' 2>'" + e.string() + "' </dev/null";
  int st = std::system(cmd.c_str());
  Outcome r;
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.out = slurp_file(o);
  r.err = slurp_file(e);
  return r;
}

/// What is wrong with `r` for case `c`, or nothing when it matches.
inline std::optional<std::string> judge(const Case& c, const Outcome& r) {
  if (r.code == 124 || r.code == 137) return "hang: killed by the timeout";
  if (r.code > 128) return "crash: killed by signal " + std::to_string(r.code - 128) + "\n" + r.err;
  if (r.code > 3) return "exit " + std::to_string(r.code) + " is not one of stax's exit codes 0-3\n" + r.err;
  if (r.err.find("terminate called") != std::string::npos || r.err.find("internal error") != std::string::npos)
    return "an internal error:\n" + r.err;
  std::string got = first_line(c.stream == "stdout" ? r.out : r.err);
  bool ok = c.match == Match::Exact    ? got == c.text
            : c.match == Match::Prefix ? got.rfind(c.text, 0) == 0
                                       : got.rfind(c.subject + ": error: ", 0) == 0 &&
                                             got.find(c.text) != std::string::npos;
  if (r.code == c.exit && ok) return std::nullopt;
  std::string how = c.match == Match::Exact ? "" : c.match == Match::Prefix ? " (prefix)" : " (contained)";
  return "exit " + std::to_string(r.code) + " (expected " + std::to_string(c.exit) + "), first line of " + c.stream +
         ":\n  got:      " + got + "\n  expected: " + c.text + how + "\nstdout:\n" + r.out + "stderr:\n" + r.err;
}

}  // namespace stax::test::bad_input
