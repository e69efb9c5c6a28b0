#include "experiments/comparison.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace stax::experiments {

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string r = "\"";
  for (char c : s) r += c == '"' ? std::string("\"\"") : std::string(1, c);
  return r + "\"";
}

std::string md_cell(const std::string& s) {
  std::string r;
  for (char c : s) r += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
  return r;
}

}  // namespace

int write_comparison(const Options& o, const std::string& name, const std::string& title, const std::string& preamble,
                     const std::vector<ComparisonRow>& rows, std::ostream& log) {
  namespace fs = std::filesystem;
  std::string file = name;
  std::replace(file.begin(), file.end(), '-', '_');
  fs::path dir = fs::path(o.out_dir) / name;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    o.error_stream(log) << "error: cannot create " << dir.string() << ": " << ec.message() << "\n";
    return 2;
  }
  std::ofstream csv(dir / (file + ".csv")), md(dir / (file + ".md"));
  if (!csv || !md) {
    o.error_stream(log) << "error: cannot write " << (dir / file).string() << ".{csv,md}\n";
    return 2;
  }
  csv << "item,quantity,text,ours,status,note\n";
  md << "# " << title << "\n\n" << preamble << "\n\n| item | quantity | text | ours | status | note |\n|---|---|---|---|---|---|\n";
  int match = 0, mismatch = 0, other = 0;
  for (const ComparisonRow& r : rows) {
    csv << csv_field(r.item) << "," << csv_field(r.quantity) << "," << csv_field(r.text) << "," << csv_field(r.ours) << ","
        << csv_field(r.status) << "," << csv_field(r.note) << "\n";
    md << "| " << md_cell(r.item) << " | " << md_cell(r.quantity) << " | " << md_cell(r.text) << " | " << md_cell(r.ours)
       << " | " << md_cell(r.status) << " | " << md_cell(r.note) << " |\n";
    if (r.status == "match") ++match;
    else if (r.status == "mismatch") ++mismatch;
    else ++other;
  }
  md << "\n" << match << " match, " << mismatch << " mismatch, " << other << " other.\n";
  for (const ComparisonRow& r : rows)
    if (r.status != "match")
      log << "  " << r.status << ": " << r.item << " / " << r.quantity << ": text " << r.text << ", ours " << r.ours
          << (r.note.empty() ? "" : " (" + r.note + ")") << "\n";
  log << name << ": " << match << " match, " << mismatch << " mismatch, " << other << " other; wrote "
      << (dir / file).string() << ".{csv,md}\n";
  return mismatch ? 1 : 0;
}

}  // namespace stax::experiments
