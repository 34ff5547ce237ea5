// Helpers shared by the test suites: scratch folders and running the pacer binary.
#pragma once

#include <string>

namespace pacer::testing {

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

struct CommandResult {
  int exit_code = 0;
  std::string output;  // stdout and stderr together
};
// Runs a shell command, capturing stdout+stderr.
CommandResult run_command(const std::string& command);
// Runs the built pacer binary with the given arguments (a shell-quoted string).
CommandResult run_pacer(const std::string& args);

}  // namespace pacer::testing
