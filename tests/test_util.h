// Helpers shared by the test suites: scratch folders and running the pacer binary.
#pragma once

#include <string>
#include <vector>

namespace pacer::testing {

// The [data] and [model] tables of the tests' small synthetic least-squares problem (200 rows, 5
// features). A fixture puts its top-level keys before them and its other tables after them.
inline constexpr const char* kLeastSquaresTables = R"([data]
source = "synthetic"
generator = "least_squares"
samples = 200
features = 5
[model]
name = "least_squares"
)";

// A fresh empty folder under the system temp dir, unique per call; removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Writes `content` to `path` (binary), failing the test on error.
void write_text(const std::string& path, const std::string& content);
std::string read_text(const std::string& path);
// The rows of a CSV file (header skipped), each split at commas (a trailing comma: a last empty
// field); and its header's columns.
std::vector<std::vector<std::string>> read_csv_rows(const std::string& path);
std::vector<std::string> read_csv_header(const std::string& path);

struct CommandResult {
  int exit_code = 0;
  std::string output;  // stdout and stderr together
};
// Runs a shell command, capturing stdout+stderr.
CommandResult run_command(const std::string& command);
// Runs the built pacer binary with the given arguments (a shell-quoted string).
CommandResult run_pacer(const std::string& args);

// Whether a gnuplot program is on the PATH.
bool gnuplot_installed();

// PATH without gnuplot for the scope's life (figures fall back to their scripts and data).
class NoGnuplot {
 public:
  NoGnuplot();
  ~NoGnuplot();

 private:
  TempDir empty_;
  std::string old_;
};

}  // namespace pacer::testing
