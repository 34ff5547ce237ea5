#include "pacer/engine/registry.h"

#include <fmt/format.h>

#include <string_view>

#include "pacer/core/error.h"
#include "pacer/engine/local/local_engine.h"
#include "pacer/engine/sim/sim_engine.h"
#ifdef PACER_HAVE_MPI
#include "pacer/engine/mpi/mpi_engine.h"
#endif

namespace pacer {
namespace {

struct EngineEntry {
  std::string_view name;
  bool simulated;
  bool multi_process;
  // Null when this build lacks the engine; `missing` then says why.
  std::unique_ptr<Engine> (*make)(const Config& config, int workers);
  // Null for engines whose workers live in the master's process.
  std::unique_ptr<JobProcesses> (*start)(const Config* config);
  std::string_view missing;
};

// Every engine pacer knows, built or not. Adding an engine: its folder under src/engine/ with a
// make function (and a start function if its workers are other processes), one line here.
constexpr EngineEntry kEngines[] = {
    {"sim", true, false, make_sim_engine, nullptr, ""},
    {"local", false, false, local::make_local_engine, nullptr, ""},
#ifdef PACER_HAVE_MPI
    {"mpi", false, true, mpi::make_mpi_engine, mpi::start_mpi_job, ""},
#else
    {"mpi", false, true, nullptr, nullptr,
     "this pacer was built without the MPI engine (Open MPI was not found when it was compiled)"},
#endif
};

const EngineEntry* find_entry(std::string_view name) {
  for (const EngineEntry& e : kEngines) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::string built_names() {
  std::vector<std::string_view> built;
  for (const EngineEntry& e : kEngines) {
    if (e.make) built.push_back(e.name);
  }
  return fmt::format("\"{}\"", fmt::join(built, "\", \""));
}

}  // namespace

const std::vector<EngineInfo>& engines() {
  static const std::vector<EngineInfo> all = [] {
    std::vector<EngineInfo> out;
    for (const EngineEntry& e : kEngines) {
      out.push_back(EngineInfo{std::string(e.name), e.make != nullptr, std::string(e.missing),
                               e.simulated, e.multi_process});
    }
    return out;
  }();
  return all;
}

const EngineInfo* find_engine(const std::string& name) {
  for (const EngineInfo& e : engines()) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

const std::string& default_engine() { return engines().front().name; }

std::unique_ptr<Engine> make_engine(const Config& config, int workers) {
  const std::string name = config.get_string("engine.name", default_engine());
  const EngineEntry* e = find_entry(name);
  if (!e) config.fail_key("engine.name", fmt::format("one of {}", built_names()));
  if (!e->make)
    config.fail_key("engine.name", fmt::format("one of {}: {}", built_names(), e->missing));
  return e->make(config, workers);
}

std::unique_ptr<JobProcesses> start_job_processes(const std::string& name, const Config* config) {
  const EngineEntry* e = find_entry(name);
  if (!e || !e->multi_process) return nullptr;
  if (!e->make) fail("engine.name = \"{}\": {}", name, e->missing);
  return e->start(config);
}

}  // namespace pacer
