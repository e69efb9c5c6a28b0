// `stax fuzz --target torch-eager|torch-inductor`: generated
// graphs run by PyTorch and judged without tolerances (peers/torch_campaign.h).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "peers/torch_campaign.h"

namespace stax::cli {

namespace fs = std::filesystem;

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

}  // namespace

int fuzz_torch_command(const FuzzCommandOptions& o) {
  if (o.target != "torch-eager" && o.target != "torch-inductor") {
    std::cerr << "error: --target must be programs, torch-eager or torch-inductor, got '" << o.target << "'\n";
    return 2;
  }
  if (!o.count && o.time <= 0) {
    std::cerr << "error: --target " << o.target << " needs --count N or --time SEC\n";
    return 2;
  }
  if (o.torch_threads < 1 || o.torch_threads > 1024) {
    std::cerr << "error: --torch-threads must be in [1, 1024], got " << o.torch_threads << "\n";
    return 2;
  }
  if (o.batch < 1 || o.batch > 1000) {
    std::cerr << "error: --batch must be in [1, 1000], got " << o.batch << "\n";
    return 2;
  }
  if (!o.db.empty() || o.jobs != 1 || !o.shard.empty() || !o.mutant.empty()) {
    std::cerr << "error: --db, --jobs, --shard and --mutant apply to --target programs only\n";
    return 2;
  }
  peers::CampaignOptions c;
  c.inductor = o.target == "torch-inductor";
  c.seed = o.seed;
  c.count = o.count.value_or(0);
  c.time_s = o.time;
  c.batch = o.batch;
  c.threads = o.torch_threads;
  c.python = o.torch_python.empty()
                 ? env_or("STAX_TORCH_PYTHON", env_or("STAX_TORCH_VENV", "/opt/stax-torch-venv") + "/bin/python")
                 : o.torch_python;
  c.python_path = env_or("STAX_PYTHONPATH", STAX_PYTHON_DIR);
  if (!fs::exists(c.python)) {
    std::cerr << "error: " << c.python << ": no such interpreter; run scripts/setup_torch.sh or pass --torch-python\n";
    return 2;
  }
  c.out = o.out_dir;
  c.work = (o.out_dir.empty() ? fs::temp_directory_path() / ("stax-torch-fuzz-" + std::to_string(::getpid()))
                              : fs::path(o.out_dir) / "work");
  c.shrink = !o.no_shrink;
  c.quiet = o.quiet || o.json;
  auto r = peers::run_campaign(c, std::cerr);
  std::error_code ec;
  fs::remove_all(c.work, ec);
  if (auto* e = std::get_if<std::string>(&r)) {
    std::cerr << "error: " << *e << "\n";
    return 2;
  }
  const peers::CampaignResult& res = std::get<peers::CampaignResult>(r);
  if (o.json) std::cout << res.to_json().dump(1) << "\n";
  else std::cout << res.text();
  return res.findings > 0 ? 1 : 0;
}

}  // namespace stax::cli
