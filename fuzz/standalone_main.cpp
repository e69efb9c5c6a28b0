// A driver for the fuzz targets where libFuzzer is not linked (GCC builds):
// it takes libFuzzer's command line (corpus folders or files,
// -max_total_time=S, -runs=N, -seed=N, -timeout=S, -max_len=N), runs every
// corpus input, then mutates corpus inputs at random (bit flips, byte
// changes, deletions, insertions, copies, splices) until the time or the run
// count is spent. No coverage guidance: this is the test suite's smoke test;
// the campaigns (scripts/fuzz_targets.sh) use libFuzzer. An input that
// crashes or runs past the timeout is written to crash-standalone (after
// -artifact_prefix=) first.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"

namespace {

std::string current;  // the input under test, saved by the signal handler
std::string artifact_prefix;  // -artifact_prefix=, as libFuzzer

void save_and_die(int sig) {
  std::string path = artifact_prefix + "crash-standalone";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    ssize_t ignored = ::write(fd, current.data(), current.size());
    (void)ignored;
    ::close(fd);
  }
  std::string msg = "standalone fuzz driver: the input is in " + path + "\n";
  ssize_t ignored = ::write(2, msg.data(), msg.size());
  (void)ignored;
  std::signal(sig, SIG_DFL);
  std::raise(sig == SIGALRM ? SIGABRT : sig);
}

void run_one(const std::string& input, unsigned timeout_s) {
  current = input;
  alarm(timeout_s);
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(current.data()), current.size());
  alarm(0);
}

std::string mutate(std::string s, const std::vector<std::string>& corpus, std::mt19937_64& rng, size_t max_len) {
  auto pick = [&](size_t n) { return n ? size_t(rng() % n) : 0; };
  int rounds = 1 + int(rng() % 4);
  for (int k = 0; k < rounds; ++k) {
    switch (rng() % 7) {
      case 0:  // flip a bit
        if (!s.empty()) s[pick(s.size())] ^= char(1u << (rng() % 8));
        break;
      case 1: {  // an interesting byte
        static constexpr char kBytes[] = {0, 1, '\x7f', '\x80', '\xff', '(', ')', '[', ']', ',', ':', '"', '-', '9'};
        if (!s.empty()) s[pick(s.size())] = kBytes[pick(sizeof kBytes)];
        break;
      }
      case 2:  // delete a range
        if (!s.empty()) {
          size_t at = pick(s.size());
          s.erase(at, 1 + pick(std::min<size_t>(16, s.size() - at)));
        }
        break;
      case 3: {  // insert random bytes
        std::string ins(1 + pick(8), '\0');
        for (char& c : ins) c = char(rng());
        s.insert(pick(s.size() + 1), ins);
        break;
      }
      case 4:  // duplicate a range
        if (!s.empty()) {
          size_t at = pick(s.size()), n = 1 + pick(std::min<size_t>(32, s.size() - at));
          s.insert(pick(s.size() + 1), s.substr(at, n));
        }
        break;
      case 5: {  // splice with another input
        const std::string& o = corpus[pick(corpus.size())];
        if (!o.empty()) s = s.substr(0, pick(s.size() + 1)) + o.substr(pick(o.size()));
        break;
      }
      default: {  // a number in decimal
        static constexpr const char* kNums[] = {"0", "-1", "65536", "2147483648", "9223372036854775807", "1e308", "nan"};
        s.insert(pick(s.size() + 1), kNums[pick(std::size(kNums))]);
      }
    }
  }
  if (s.size() > max_len) s.resize(max_len);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  double max_time = 0;
  long long runs = -1;
  unsigned timeout_s = 20;
  size_t max_len = 4096;
  uint64_t seed = 1;
  std::vector<std::string> corpus;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      size_t n = std::strlen(flag);
      return a.compare(0, n, flag) == 0 ? a.c_str() + n : nullptr;
    };
    if (const char* v = value("-max_total_time=")) max_time = std::atof(v);
    else if (const char* v = value("-runs=")) runs = std::atoll(v);
    else if (const char* v = value("-timeout=")) timeout_s = unsigned(std::atoi(v));
    else if (const char* v = value("-max_len=")) max_len = size_t(std::atoll(v));
    else if (const char* v = value("-seed=")) seed = uint64_t(std::atoll(v));
    else if (const char* v = value("-artifact_prefix=")) artifact_prefix = v;
    else if (a.rfind("-", 0) == 0) continue;  // other libFuzzer flags
    else {
      std::filesystem::path p(a);
      std::vector<std::filesystem::path> files;
      if (std::filesystem::is_directory(p)) {
        for (const auto& e : std::filesystem::directory_iterator(p))
          if (e.is_regular_file()) files.push_back(e.path());
      } else {
        files.push_back(p);
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary);
        corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      }
    }
  }
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGALRM}) std::signal(sig, save_and_die);
  if (corpus.empty()) corpus.emplace_back();
  long long executed = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& c : corpus) run_one(c, timeout_s), ++executed;
  std::mt19937_64 rng(seed);
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  while ((runs < 0 || executed < runs) && (max_time > 0 ? elapsed() < max_time : runs >= 0)) {
    run_one(mutate(corpus[size_t(rng() % corpus.size())], corpus, rng, max_len), timeout_s);
    ++executed;
  }
  // -max_total_time counts the mutated inputs' time; the line, all of it.
  std::cout << "standalone fuzz driver: " << executed << " inputs (" << corpus.size() << " from the corpus) in "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s, no crash\n";
  return 0;
}
