#include "cli/commands.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "semantics/evaluator.h"
#include "semantics/npy.h"
#include "semantics/parser.h"
#include "semantics/random_inputs.h"

namespace stax::cli {

namespace fs = std::filesystem;
using namespace stax::sem;

std::optional<Program> load_program(const std::string& file) {
  ParseResult r = parse_file(file);
  if (auto* d = std::get_if<Diag>(&r)) {
    std::cerr << d->str() << "\n";
    return std::nullopt;
  }
  return std::get<Program>(std::move(r));
}

namespace {

std::string preview(const Tensor& t, int show) {
  std::string s = "[";
  int64_t n = std::min<int64_t>(t.size(), show);
  for (int64_t i = 0; i < n; ++i) s += (i ? ", " : "") + element_text(t, i);
  if (t.size() > n) s += ", ... (" + std::to_string(t.size()) + " elements)";
  return s + "]";
}

}  // namespace

bool read_inputs(const Program& p, const std::vector<std::string>& specs, Inputs& in) {
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "error: --input expects NAME=FILE.npy, got '" << spec << "'\n";
      return false;
    }
    auto r = read_npy(spec.substr(eq + 1));
    if (auto* e = std::get_if<std::string>(&r)) {
      std::cerr << "error: " << *e << "\n";
      return false;
    }
    in[spec.substr(0, eq)] = std::get<Tensor>(std::move(r));
  }
  (void)p;
  return true;
}

int run_command(const RunOptions& o) {
  if (o.semantics != "ieee" && o.semantics != "real") {
    std::cerr << "error: --semantics expects ieee or real, got '" << o.semantics << "'\n";
    return 2;
  }
  if (o.backend != "interp" && o.backend != "cpu") {
    std::cerr << "error: --backend expects interp or cpu, got '" << o.backend
              << "' (gpu is not available in this build)\n";
    return 2;
  }
  if (o.backend != "interp" && o.semantics != "ieee") {
    std::cerr << "error: --backend " << o.backend << " computes the IEEE semantics; use --semantics ieee\n";
    return 2;
  }
  auto prog = load_program(o.file);
  if (!prog) return 2;
  Inputs in;
  if (!read_inputs(*prog, o.inputs, in)) return 2;
  if (o.random_seed) {
    Inputs drawn = random_inputs(*prog, *o.random_seed);
    for (auto& [name, t] : drawn)
      if (!in.count(name)) in[name] = std::move(t);
  }
  if (auto err = check_inputs(*prog, in)) {
    std::cerr << "error: " << *err << "\n";
    return 2;
  }
  if (!o.out_dir.empty()) {
    std::error_code ec;
    fs::create_directories(fs::path(o.out_dir) / "inputs", ec);
    if (ec) {
      std::cerr << "error: cannot create " << o.out_dir << ": " << ec.message() << "\n";
      return 2;
    }
    if (o.random_seed) {
      for (const auto& [name, t] : in) {
        std::string path = (fs::path(o.out_dir) / "inputs" / (name + npy_suffix(t.dtype))).string();
        if (auto e = write_npy(path, t)) {
          std::cerr << "error: " << *e << "\n";
          return 2;
        }
      }
      std::cout << "inputs drawn with seed " << *o.random_seed << " written to " << o.out_dir
                << "/inputs/ (replay with --input NAME=FILE)\n";
    }
  }
  std::map<std::string, Tensor> outs;
  std::optional<Failure> failure;
  try {
    if (o.semantics == "ieee") {
      IeeeOutcome r = run_on_backend(o.backend, *prog, in, o.threads);
      failure = r.failure;
      for (auto& [k, v] : r.outputs) outs[k] = *v;
    } else {
      RealDomain conv(o.precision);
      RealOutcome r = eval_real(*prog, in, o.precision);
      failure = r.failure;
      for (auto& [k, v] : r.outputs) outs[k] = conv.to_tensor_f64(*v);
    }
  } catch (const ResourceError& e) {
    std::cerr << "error: " << e.message << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 2;
  }
  if (failure) {
    std::cout << "program failed (⊥): " << failure->str() << "\n";
    return 1;
  }
  for (const std::string& name : prog->outputs) {
    const Tensor& t = outs.at(name);
    std::cout << name << " : " << type_str({t.dtype, t.shape}) << " = " << preview(t, o.show) << "\n";
    if (!o.out_dir.empty()) {
      std::string path = (fs::path(o.out_dir) / (name + npy_suffix(t.dtype))).string();
      if (auto e = write_npy(path, t)) {
        std::cerr << "error: " << *e << "\n";
        return 2;
      }
    }
  }
  return 0;
}

int examples_command(const ExamplesOptions& o) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(o.dir, ec))
    if (e.path().extension() == ".stx") files.push_back(e.path());
  if (ec) {
    std::cerr << "error: cannot read " << o.dir << ": " << ec.message() << "\n";
    return 2;
  }
  std::sort(files.begin(), files.end());
  std::printf("%-28s %-8s %-16s %-26s %-26s %s\n", "program", "output", "type", "ieee[0]", "real[0] (f64)",
              "max |ieee-real|");
  int rc = 0;
  for (const fs::path& f : files) {
    auto prog = load_program(f.string());
    if (!prog) {
      rc = 2;
      continue;
    }
    Inputs in = random_inputs(*prog, o.seed, RandomOptions{0.0});
    IeeeOutcome a = eval_ieee(*prog, in);
    RealOutcome b = eval_real(*prog, in);
    if (a.failure || b.failure) {
      std::printf("%-28s ⊥ %s\n", f.filename().c_str(), (a.failure ? a.failure : b.failure)->reason.c_str());
      continue;
    }
    RealDomain conv;
    for (const std::string& name : prog->outputs) {
      const Tensor& x = *a.outputs.at(name);
      Tensor y = conv.to_tensor_f64(*b.outputs.at(name));
      double md = 0;
      for (int64_t i = 0; i < x.size(); ++i) {
        double d = std::fabs(x.get_double(i) - y.get_double(i));
        if (!std::isnan(d)) md = std::max(md, d);
      }
      std::string ty = type_str({x.dtype, x.shape});
      std::string x0 = x.size() ? element_text(x, 0) : "-";
      std::string y0 = y.size() ? element_text(y, 0) : "-";
      std::printf("%-28s %-8s %-16s %-26s %-26s %.3g\n", f.filename().c_str(), name.c_str(), ty.c_str(),
                  x0.substr(0, 26).c_str(), y0.substr(0, 26).c_str(), md);
    }
  }
  return rc;
}

}  // namespace stax::cli
