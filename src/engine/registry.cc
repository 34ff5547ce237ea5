#include "pacer/engine/registry.h"

#include <fmt/format.h>

#include <string_view>

#include "pacer/core/error.h"
#include "pacer/engine/sim/sim_engine.h"
#ifdef PACER_HAVE_MPI
#include "pacer/engine/mpi/mpi_engine.h"
#endif

namespace pacer {
namespace {

struct EngineEntry {
  std::string_view name;
  // Null when this build lacks the engine; `missing` then says why.
  std::unique_ptr<Engine> (*make)(const Config& config, int workers);
  // Null for engines whose workers live in the master's process.
  int (*serve)(const WorkerProcessBuilder& build);
  std::string_view missing;
};

// Every engine pacer knows, built or not. Adding an engine: its folder under src/engine/ with a
// make function (and a serve function if its workers are other processes), one line here.
constexpr EngineEntry kEngines[] = {
    {"sim", make_sim_engine, nullptr, ""},
#ifdef PACER_HAVE_MPI
    {"mpi", mpi::make_mpi_engine, mpi::serve_worker_ranks, ""},
#else
    {"mpi", nullptr, nullptr,
     "this pacer was built without the MPI engine (Open MPI was not found when it was compiled)"},
#endif
};

const EngineEntry& find_engine(const Config& config) {
  const std::string name = config.get_string("engine.name", "sim");
  std::vector<std::string> built;
  for (const EngineEntry& e : kEngines) {
    if (e.make && e.name == name) return e;
    if (e.make) built.emplace_back(e.name);
  }
  for (const EngineEntry& e : kEngines) {
    if (e.name == name) {
      config.fail_key("engine.name",
                      fmt::format("one of \"{}\": {}", fmt::join(built, "\", \""), e.missing));
    }
  }
  config.fail_key("engine.name", fmt::format("one of \"{}\"", fmt::join(built, "\", \"")));
}

}  // namespace

std::unique_ptr<Engine> make_engine(const Config& config, int workers) {
  return find_engine(config).make(config, workers);
}

std::vector<std::string> engine_names() {
  std::vector<std::string> names;
  for (const EngineEntry& e : kEngines) {
    if (e.make) names.emplace_back(e.name);
  }
  return names;
}

int serve_worker_process(const std::string& name, const WorkerProcessBuilder& build) {
  for (const EngineEntry& e : kEngines) {
    if (e.name != name) continue;
    if (!e.make) fail("engine '{}': {}", name, e.missing);
    if (!e.serve) fail("engine '{}' has no worker processes to serve", name);
    return e.serve(build);
  }
  fail("no engine named '{}'", name);
}

}  // namespace pacer
