// The layering rule of DESIGN.md section 1: each layer knows only the layers below it. Every
// layer's public headers live in the one include/ folder, so the compiler and the linker let any
// file include any header; this test reads every source and header under include/pacer/<layer>,
// src/<layer> and tools/ and fails, naming the file, the line and the include, when a file
// includes a header of a layer its own layer may not know (one above it, or a sibling).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// ---- The table: the one place that says which layer may include which. ----
//
// kLayerDeps lists each layer's direct dependencies, exactly the DEPS of its pacer_layer(...) line
// in the top-level CMakeLists.txt (DESIGN.md section 1):
//   core -> data -> model (-> model_torch), and timing, coding (both on core only) -> method
//   (model, timing, coding) -> engine (the interface every engine implements) -> engine_sim, and
//   engine_cluster (the message protocol over a transport) -> engine_local, engine_mpi (no engine
//   knows another) -> engines (the registry); method -> report (results, statistics, verdicts,
//   figures: runs nothing) -> run (one run: report, engines, model; model_torch only through the
//   plugin model loads, torch_plugin.h) -> study (many
//   runs) -> tools (the pacer program).
// A layer may include its own headers and those of every layer it reaches through these edges
// (the transitive closure), nothing else. When a pacer_layer's DEPS change, change this table.
const std::map<std::string, std::vector<std::string>> kLayerDeps = {
    {"core", {}},
    {"data", {"core"}},
    {"model", {"data"}},
    {"model_torch", {"model"}},
    {"timing", {"core"}},
    {"coding", {"core"}},
    {"method", {"model", "timing", "coding"}},
    {"engine", {"method"}},
    {"engine_sim", {"engine"}},
    {"engine_cluster", {"engine"}},
    {"engine_local", {"engine_cluster"}},
    {"engine_mpi", {"engine_cluster"}},
    {"engines", {"engine_sim", "engine_local", "engine_mpi"}},
    {"report", {"method"}},
    {"run", {"report", "engines", "model"}},
    {"study", {"run"}},
    {"tools", {"study"}},
};

// Which layer a file of the tree belongs to: the longest matching path prefix wins.
// torch_models.h is the (torch-free) public header of model/torch, kept beside model's headers.
const std::vector<std::pair<std::string, std::string>> kFolders = {
    {"include/pacer/core/", "core"},
    {"src/core/", "core"},
    {"include/pacer/data/", "data"},
    {"src/data/", "data"},
    {"include/pacer/model/", "model"},
    {"src/model/", "model"},
    {"include/pacer/model/torch_models.h", "model_torch"},
    {"src/model/torch/", "model_torch"},
    {"include/pacer/timing/", "timing"},
    {"src/timing/", "timing"},
    {"include/pacer/coding/", "coding"},
    {"src/coding/", "coding"},
    {"include/pacer/method/", "method"},
    {"src/method/", "method"},
    {"include/pacer/engine/engine.h", "engine"},
    {"include/pacer/engine/worker_statistics.h", "engine"},
    {"src/engine/worker_statistics.cc", "engine"},
    {"include/pacer/engine/registry.h", "engines"},
    {"src/engine/", "engines"},
    {"include/pacer/engine/sim/", "engine_sim"},
    {"src/engine/sim/", "engine_sim"},
    {"include/pacer/engine/cluster/", "engine_cluster"},
    {"src/engine/cluster/", "engine_cluster"},
    {"include/pacer/engine/local/", "engine_local"},
    {"src/engine/local/", "engine_local"},
    {"include/pacer/engine/mpi/", "engine_mpi"},
    {"src/engine/mpi/", "engine_mpi"},
    {"include/pacer/report/", "report"},
    {"src/report/", "report"},
    {"include/pacer/run/", "run"},
    {"src/run/", "run"},
    {"include/pacer/study/", "study"},
    {"src/study/", "study"},
    {"tools/", "tools"},
    {"python/", "tools"},  // the Python package's extension module: a program over study
};

// Third-party headers that only one layer may include: the layers above reach MPI and libtorch
// through that layer's interface (the torch-free torch_models.h, the engine's runtime.h), so
// they build the same with and without them.
const std::vector<std::pair<std::string, std::string>> kOwnedExternal = {
    {"mpi.h", "engine_mpi"},
    {"torch/", "model_torch"},
    {"ATen/", "model_torch"},
    {"c10/", "model_torch"},
};

// ---- The checker. ----

// Every layer `layer` may know, itself included.
std::set<std::string> known_layers(const std::string& layer) {
  std::set<std::string> known;
  std::vector<std::string> todo = {layer};
  while (!todo.empty()) {
    std::string l = todo.back();
    todo.pop_back();
    if (!known.insert(l).second) continue;
    auto it = kLayerDeps.find(l);
    if (it == kLayerDeps.end()) {
      ADD_FAILURE() << "layer '" << l << "' is named in kLayerDeps but has no entry of its own";
      continue;
    }
    for (const auto& d : it->second) todo.push_back(d);
  }
  return known;
}

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ", ") + x;
  return out;
}

// The layer of a path relative to the repository root ("src/core/config.cc"), or "" for none.
std::string layer_of(const std::string& rel) {
  std::string best, layer;
  for (const auto& [prefix, l] : kFolders) {
    if (rel.compare(0, prefix.size(), prefix) == 0 && prefix.size() > best.size()) {
      best = prefix;
      layer = l;
    }
  }
  return layer;
}

// If `line` is an #include, sets `quoted` and `name` and returns true.
bool parse_include(const std::string& line, bool& quoted, std::string& name) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line[i] != '#') return false;
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string::npos || line.compare(i, 7, "include") != 0) return false;
  i = line.find_first_not_of(" \t", i + 7);
  if (i == std::string::npos || (line[i] != '"' && line[i] != '<')) return false;
  quoted = line[i] == '"';
  size_t end = line.find(quoted ? '"' : '>', i + 1);
  if (end == std::string::npos) return false;
  name = line.substr(i + 1, end - i - 1);
  return true;
}

// The violations in one file: `rel` is its path relative to `root`, `text` its contents. Each is
// "FILE:LINE: #include X: <why>".
std::vector<std::string> check_file(const fs::path& root, const std::string& rel,
                                    const std::string& text) {
  std::vector<std::string> out;
  const std::string layer = layer_of(rel);
  if (layer.empty()) {
    out.push_back(rel + ": belongs to no layer (add its folder to kFolders in " __FILE__ ")");
    return out;
  }
  const std::set<std::string> known = known_layers(layer);
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    bool quoted = false;
    std::string name;
    if (!parse_include(line, quoted, name)) continue;
    const std::string where = rel + ":" + std::to_string(number) + ": #include " +
                              (quoted ? "\"" + name + "\"" : "<" + name + ">") + ": ";
    // The header's path in the tree, if it is one of pacer's.
    std::string target;
    if (name.compare(0, 6, "pacer/") == 0) {
      target = "include/" + name;
    } else if (quoted) {
      fs::path local = (fs::path(rel).parent_path() / name).lexically_normal();
      if (fs::exists(root / local)) target = local.generic_string();
    }
    if (target.empty()) {  // a system or third-party header
      for (const auto& [prefix, owner] : kOwnedExternal) {
        if (name.compare(0, prefix.size(), prefix) == 0 && owner != layer) {
          out.push_back(where + "only layer " + owner + " may include this header (" + layer +
                        " reaches it through " + owner + "'s interface)");
        }
      }
      continue;
    }
    const std::string to = layer_of(target);
    if (to.empty()) {
      out.push_back(where + "the header " + target + " belongs to no layer");
    } else if (!known.count(to)) {
      out.push_back(where + "layer " + layer + " may not include a header of layer " + to +
                    " (it knows only: " + join(known) + ")");
    }
  }
  return out;
}

fs::path source_root() { return fs::path(PACER_SOURCE_DIR); }

bool is_source(const fs::path& p) {
  static const std::set<std::string> kExt = {".h", ".hh", ".hpp", ".inl", ".cc", ".cpp", ".cxx"};
  return kExt.count(p.extension().string()) > 0;
}

// Every source and header under include/pacer, src, tools and python, relative to the root,
// sorted.
std::vector<std::string> tree_files(const fs::path& root) {
  std::vector<std::string> files;
  for (const char* top : {"include/pacer", "src", "tools", "python"}) {
    if (!fs::exists(root / top)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      if (e.is_regular_file() && is_source(e.path())) {
        files.push_back(e.path().lexically_relative(root).generic_string());
      }
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// ---- The tests. ----

TEST(Layering, TreeIncludesOnlyHeadersOfKnownLayers) {
  const fs::path root = source_root();
  const std::vector<std::string> files = tree_files(root);
  // The tree has well over a hundred files; far fewer means the root is wrong.
  ASSERT_GT(files.size(), 50u) << "found only " << files.size() << " files under " << root;
  std::set<std::string> layers_seen;
  for (const auto& rel : files) {
    layers_seen.insert(layer_of(rel));
    for (const auto& v : check_file(root, rel, read_file(root / rel))) ADD_FAILURE() << v;
  }
  // Every layer of the table has files (except the optional ones), so a renamed folder that the
  // table no longer matches is noticed.
  for (const char* l : {"core", "data", "model", "timing", "coding", "method", "engine_sim",
                        "engine_cluster", "engine_local", "report", "run", "study", "tools"}) {
    EXPECT_TRUE(layers_seen.count(l)) << "no file of layer " << l << " found: is kFolders stale?";
  }
}

// The checker itself, on made-up files: an include upward, a sibling's, one engine's from the
// other, the torch layer's from below it, and MPI outside the MPI engine all fail; includes
// downward, of one's own layer and of local headers pass.
TEST(Layering, CheckerFlagsWhatTheTableForbids) {
  const fs::path root = source_root();
  auto count = [&](const std::string& rel, const std::string& text) {
    return check_file(root, rel, text).size();
  };
  const auto up = check_file(root, "src/core/fake.cc",
                             "// x\n#include <vector>\n#include \"pacer/run/experiment.h\"\n");
  ASSERT_EQ(up.size(), 1u);
  EXPECT_EQ(up[0],
            "src/core/fake.cc:3: #include \"pacer/run/experiment.h\": layer core may not include a "
            "header of layer run (it knows only: core)");
  // A run may not know the studies above it, nor report the run that draws through it.
  EXPECT_EQ(count("src/run/fake.cc", "#include \"pacer/study/compare.h\"\n"), 1u);
  EXPECT_EQ(count("src/report/fake.cc", "#include \"pacer/run/recorder.h\"\n"), 1u);
  EXPECT_EQ(count("src/report/fake.cc", "#include \"pacer/engine/registry.h\"\n"), 1u);
  EXPECT_EQ(count("src/timing/fake.cc", "#include \"pacer/coding/placement.h\"\n"), 1u);
  EXPECT_EQ(count("include/pacer/data/fake.h", "  #  include <pacer/model/model.h>\n"), 1u);
  EXPECT_EQ(count("src/engine/sim/fake.cc", "#include \"pacer/engine/mpi/runtime.h\"\n"), 1u);
  EXPECT_EQ(count("src/method/fake.cc", "#include \"pacer/model/torch_models.h\"\n"), 1u);
  EXPECT_EQ(count("src/run/fake.cc", "#include <mpi.h>\n"), 1u);
  EXPECT_EQ(count("include/pacer/model/torch_models.h", "#include <torch/torch.h>\n"), 0u);
  EXPECT_EQ(count("src/model/fake.cc", "#include <torch/torch.h>\n"), 1u);
  EXPECT_EQ(count("include/pacer/fake.h", "#include <vector>\n"), 1u);  // in no layer
  EXPECT_EQ(
      count("src/run/fake.cc",
            "#include \"pacer/core/config.h\"\n#include \"pacer/engine/sim/simulator.h\"\n"
            "#include \"pacer/engine/mpi/runtime.h\"\n#include \"pacer/model/torch_plugin.h\"\n"),
      0u);
  // The deep models reach run only through the plugin loader (torch_plugin.h).
  EXPECT_EQ(count("src/run/fake.cc", "#include \"pacer/model/torch_models.h\"\n"), 1u);
  EXPECT_EQ(count("src/method/fake.cc",
                  "#include \"coded.h\"\n#include \"pacer/timing/timing_model.h\"\n"),
            0u);
  EXPECT_EQ(count("tools/pacer/fake.cc", "#include \"pacer/run/experiment.h\"\n"), 0u);
  EXPECT_EQ(count("src/model/torch/fake.cc", "#include \"../internal.h\"\n"), 0u);
  EXPECT_EQ(count("src/data/fake.cc", "#include \"../method/coded.h\"\n"), 1u);
}

}  // namespace
