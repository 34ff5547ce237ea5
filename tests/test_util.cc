#include "test_util.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace pacer::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "pacer-test-XXXXXX").string();
  char* made = mkdtemp(pattern.data());
  EXPECT_NE(made, nullptr);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void write_text(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  ASSERT_TRUE(out) << path;
  out << content;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) {
    result.exit_code = -1;
    return result;
  }
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    result.output.append(buffer.data(), n);
  }
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

CommandResult run_pacer(const std::string& args) {
#ifdef PACER_BINARY
  return run_command(std::string(PACER_BINARY) + " " + args);
#else
  return run_command("pacer " + args);
#endif
}

bool gnuplot_installed() { return run_command("command -v gnuplot >/dev/null").exit_code == 0; }

NoGnuplot::NoGnuplot() {
  const char* old = std::getenv("PATH");
  old_ = old ? old : "";
  setenv("PATH", empty_.path().c_str(), 1);
}

NoGnuplot::~NoGnuplot() { setenv("PATH", old_.c_str(), 1); }

namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream cells(line);
  while (std::getline(cells, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.push_back("");
  return fields;
}

}  // namespace

std::vector<std::vector<std::string>> read_csv_rows(const std::string& path) {
  std::istringstream in(read_text(path));
  std::string line;
  std::getline(in, line);
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) rows.push_back(split_csv_line(line));
  return rows;
}

std::vector<std::string> read_csv_header(const std::string& path) {
  std::istringstream in(read_text(path));
  std::string line;
  std::getline(in, line);
  return split_csv_line(line);
}

}  // namespace pacer::testing
