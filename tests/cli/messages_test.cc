// Error messages about the command line: they name the command-line words (not the config file)
// for keys given there, suggest the nearest valid key or name, and say where a relative path was
// looked for.
#include <gtest/gtest.h>

#include <filesystem>

#include "test_util.h"

namespace pacer::testing {
namespace {

const std::string kConfig = std::string(R"(
workers = 4
max_steps = 10
eval_every = 0
)") + kLeastSquaresTables + R"([optimizer]
lr = 0.05
[method]
name = "dgd"
[timing]
model = "fixed"
)";

// The one error line pacer printed, without its "pacer: error: " prefix.
std::string error_line(const CommandResult& r) {
  const std::string prefix = "pacer: error: ";
  const size_t at = r.output.find(prefix);
  if (at == std::string::npos) return "";
  return r.output.substr(at + prefix.size(), r.output.find('\n', at) - at - prefix.size());
}

// Runs `pacer COMMAND c.toml ARGS` in a fresh folder holding c.toml (kConfig plus `extra`); the
// run must fail with status 1, and its error line is returned.
std::string failure(const std::string& command, const std::string& args,
                    const std::string& extra = "") {
  TempDir dir;
  write_text(dir.file("c.toml"), kConfig + extra);
  const CommandResult r = run_command("cd " + dir.path() + " && " + PACER_BINARY + " " + command +
                                      " c.toml --out out " + args);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  return error_line(r);
}

TEST(Messages, AMisspeltSetKeyNamesTheCommandLineAndTheNearestKey) {
  EXPECT_EQ(failure("run", "--set data.max_tarin=6000"),
            "--set data.max_tarin=6000: unknown key 'data.max_tarin' (misspelt, or not used by "
            "this method/model/timing model); did you mean \"data.max_train\"?");
  // The same typo in the file names the file.
  EXPECT_EQ(failure("run", "", "[partition]\nschem = \"iid\"\n"),
            "c.toml: unknown key 'partition.schem' (misspelt, or not used by this "
            "method/model/timing model); did you mean \"partition.scheme\"?");
}

TEST(Messages, ABadSetValueNamesTheCommandLine) {
  EXPECT_EQ(failure("run", "--set workers=many"),
            "--set workers=many: key 'workers': expected an integer, got string \"many\"");
  EXPECT_EQ(failure("run", "--set data.source=csvv"),
            "--set data.source=csvv: key 'data.source': expected one of fashion-mnist, mnist, "
            "idx, cifar10, libsvm, csv, npy, synthetic, got \"csvv\"; did you mean \"csv\"?");
  const std::string method = failure("run", "--set method.name=pgc-crr");
  EXPECT_EQ(method.rfind("--set method.name=pgc-crr: key 'method.name': expected one of dgd, ", 0),
            0u)
      << method;
  EXPECT_NE(method.find("got \"pgc-crr\"; did you mean \"pgc-cr\"?"), std::string::npos) << method;
}

TEST(Messages, MethodsErrorsNameTheSpecAndTheNearestName) {
  const std::string method = failure("compare", "--methods dgd,pgc-crr");
  EXPECT_EQ(method.rfind("--methods pgc-crr: key 'method.name': expected one of ", 0), 0u)
      << method;
  EXPECT_NE(method.find("got \"pgc-crr\"; did you mean \"pgc-cr\"?"), std::string::npos) << method;
  EXPECT_EQ(failure("compare", "--methods dgd,is-sgd:kk=2"),
            "--methods is-sgd:kk=2: unknown key 'method.kk' (misspelt, or not used by the method "
            "whose spec sets it); did you mean \"method.k\"?");
  EXPECT_EQ(failure("compare", "--methods dgd --tune optimizer.lrr=0.1,0.2"),
            "--tune optimizer.lrr=0.1,0.2: dgd does not read optimizer.lrr; did you mean "
            "\"optimizer.lr\"?");
}

TEST(Messages, AMissingRelativePathNamesTheFolderItWasResolvedAgainst) {
  TempDir dir;
  write_text(dir.file("c.toml"), kConfig);
  const CommandResult r =
      run_command("cd " + dir.path() + " && " + PACER_BINARY +
                  " run c.toml --out out --set data.source=csv --set data.train=x.csv");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(error_line(r),
            "--set data.train=x.csv: data.train: \"x.csv\" not found (resolved "
            "against " +
                std::filesystem::canonical(dir.path()).string() + ")");
}

}  // namespace
}  // namespace pacer::testing
