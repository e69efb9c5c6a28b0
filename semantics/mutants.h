// Seeded bugs (docs/design.md §3, `stax fuzz --mutant`): deliberately wrong behaviours compiled into the
// product behind `--mutant NAME`, off by default. Each is modelled on a real
// compiler bug; a fuzz campaign's measure is how quickly it finds them. The
// catalog lives here, in the lowest library, so that transforms and backends
// can both consult it; each mutant is implemented where its real bug lived.
//
// At most one mutant is active per process. It is set once at start-up (CLI)
// or through ScopedMutant (tests), before any worker thread starts.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace stax::sem {

struct MutantInfo {
  std::string_view name;
  std::string_view where;        ///< the component that carries it: a transform, "cpu codegen", ...
  std::string_view description;  ///< one line, with the real bug it models
};

/// Every mutant, in a fixed order.
std::span<const MutantInfo> mutant_catalog();

/// Activates a mutant ("" deactivates). False (and nothing changes) for an
/// unknown name.
bool set_active_mutant(std::string_view name);

/// The active mutant's name, "" when none.
std::string_view active_mutant();

/// True when `name` is the active mutant. Cheap: one comparison.
bool mutant_active(std::string_view name);

/// Activates a mutant for a scope (tests).
class ScopedMutant {
 public:
  explicit ScopedMutant(std::string_view name);
  ~ScopedMutant();
  ScopedMutant(const ScopedMutant&) = delete;
  ScopedMutant& operator=(const ScopedMutant&) = delete;

 private:
  std::string previous_;
};

}  // namespace stax::sem
