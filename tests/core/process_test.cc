// run_children (core/process.h): exit statuses in list order, signals and exec failures reported,
// and never more children alive than allowed.
#include "pacer/core/process.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "pacer/core/error.h"

namespace pacer {
namespace {

struct Scratch {
  Scratch()
      : path(std::filesystem::temp_directory_path() /
             ("pacer-process-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path);
  }
  ~Scratch() { std::filesystem::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
  std::filesystem::path path;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ChildProcess shell(const std::string& script, const std::string& log) {
  return ChildProcess{{"/bin/sh", "-c", script}, log};
}

TEST(RunChildren, ReportsEachExitStatusInListOrder) {
  Scratch dir;
  const std::vector<ChildOutcome> out = run_children(
      {shell("echo hello; exit 3", dir.file("a.log")), shell("kill -KILL $$", dir.file("b.log")),
       ChildProcess{{dir.file("no-such-program")}, dir.file("c.log")},
       shell("exit 0", dir.file("d.log"))},
      2);
  ASSERT_EQ(out.size(), 4u);
  for (const ChildOutcome& o : out) EXPECT_TRUE(o.started);
  EXPECT_EQ(out[0].exit_status, 3);
  EXPECT_EQ(out[1].exit_status, 128 + 9);
  EXPECT_EQ(out[2].exit_status, 127);
  EXPECT_EQ(out[3].exit_status, 0);
  EXPECT_EQ(slurp(dir.file("a.log")), "hello\n");
  EXPECT_NE(slurp(dir.file("c.log")).find("could not be started"), std::string::npos);
}

// With one at a time, every child ends before the next starts: the markers alternate, whatever
// the machine's speed.
TEST(RunChildren, StartsNoMoreThanAllowed) {
  Scratch dir;
  const std::string marks = dir.file("marks");
  std::vector<ChildProcess> children;
  for (int i = 0; i < 4; ++i) {
    children.push_back(shell("echo start >> " + marks + "; sleep 0.05; echo end >> " + marks,
                             dir.file("log" + std::to_string(i))));
  }
  for (const ChildOutcome& o : run_children(children, 1)) EXPECT_EQ(o.exit_status, 0);
  EXPECT_EQ(slurp(marks), "start\nend\nstart\nend\nstart\nend\nstart\nend\n");
}

TEST(RunChildren, RefusesALogItCannotCreate) {
  EXPECT_THROW(run_children({shell("exit 0", "/nonexistent-dir/x.log")}, 1), Error);
}

}  // namespace
}  // namespace pacer
