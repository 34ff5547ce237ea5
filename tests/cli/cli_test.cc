// The command-line program as a user meets it: bad input gives one clear line and a non-zero
// exit; nothing already written is damaged.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "pacer/method/method.h"
#include "test_util.h"

namespace pacer::testing {
namespace {

const std::string kGood = std::string(R"(
workers = 4
max_steps = 20
eval_every = 0
)") + kLeastSquaresTables +
                          R"([optimizer]
lr = 0.05
[method]
name = "dgd"
[timing]
model = "fixed"
)";

// Runs pacer with a config made of kGood plus `extra` lines (later keys in TOML tables must not
// repeat, so `extra` only adds keys or uses --set).
CommandResult run_with(const TempDir& dir, const std::string& config_text,
                       const std::string& args = "") {
  write_text(dir.file("c.toml"), config_text);
  return run_pacer("run " + dir.file("c.toml") + " --out " + dir.file("out") + " " + args);
}

// The one error line pacer printed.
std::string error_line(const CommandResult& r) {
  size_t at = r.output.find("pacer: error: ");
  return at == std::string::npos ? "" : r.output.substr(at, r.output.find('\n', at) - at);
}

TEST(Cli, GoodConfigRunsAndWritesOutputs) {
  TempDir dir;
  CommandResult r = run_with(dir, kGood);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(read_text(dir.file("out/log.csv")).empty());
  EXPECT_NE(read_text(dir.file("out/summary.json")).find("\"status\""), std::string::npos);
  EXPECT_NE(read_text(dir.file("out/config.toml")).find("eval_every"), std::string::npos);
  // The figure's script reads the small files pacer wrote for it, never the full log.csv.
  const std::string script = read_text(dir.file("out/loss.gp"));
  EXPECT_NE(script.find("'figures/loss-evals.dat'"), std::string::npos) << script;
  EXPECT_EQ(script.find("log.csv"), std::string::npos) << script;
  // Its title says how long the run ran and its time axis on which clock (summary.json).
  const std::string summary = read_text(dir.file("out/summary.json"));
  std::smatch steps;
  ASSERT_TRUE(std::regex_search(summary, steps, std::regex("\"steps\": ([0-9]+)"))) << summary;
  EXPECT_NE(script.find(", " + steps[1].str() + " steps, "), std::string::npos) << script;
  EXPECT_NE(summary.find("\"clock\": \"simulated\""), std::string::npos);
  EXPECT_NE(script.find("set label 91 'simulated time (s)'"), std::string::npos);
}

struct BadCase {
  const char* name;
  const char* args;      // --set overrides applied to kGood
  const char* expected;  // a substring the error line must contain
};

class CliBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(CliBadInput, ExitsNonZeroWithOneLineNamingTheProblem) {
  TempDir dir;
  CommandResult r = run_with(dir, kGood, GetParam().args);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  std::string line = error_line(r);
  EXPECT_NE(line.find(GetParam().expected), std::string::npos) << r.output;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CliBadInput,
    ::testing::Values(
        BadCase{"unknown_key", "--set method.kk=3", "unknown key 'method.kk'"},
        BadCase{"wrong_type", "--set workers='\"many\"'", "key 'workers': expected an integer"},
        BadCase{"zero_workers", "--set workers=0", "key 'workers'"},
        BadCase{"negative_workers", "--set workers=-3", "key 'workers'"},
        BadCase{"k_too_large", "--set method.name=is-sgd --set method.k=4", "method.k"},
        BadCase{"unknown_method", "--set method.name=sgdx", "method.name"},
        BadCase{"missing_data", "--set data.source=libsvm --set data.train=/nonexistent/a.svm",
                "/nonexistent/a.svm"},
        BadCase{"diverging", "--set optimizer.lr=1e6 --set max_steps=1000", "diverged"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Cli, TooManyLostWorkersIsOneErrorNamingThemWithTheOutputsKept) {
  TempDir dir;
  // GC-FR with s = 1 (groups {0, 1}, {2, 3}) loses its whole first group at t = 3.
  CommandResult r = run_with(dir, kGood,
                             "--set method.name=gc-fr --set method.s=1 --set max_steps=100 "
                             "--set 'faults.kill_workers=[0, 1]' --set 'faults.kill_at=[3.0]'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::string line = error_line(r);
  EXPECT_NE(line.find("too many workers lost: workers 0, 1 are lost at t = 3"), std::string::npos)
      << r.output;
  EXPECT_NE(line.find(dir.file("out")), std::string::npos) << r.output;
  EXPECT_NE(read_text(dir.file("out/summary.json")).find("\"status\": \"too_many_lost\""),
            std::string::npos);
  EXPECT_NE(read_text(dir.file("out/log.csv")).find('\n'), std::string::npos);
}

TEST(Cli, ASimulatorRunStartedByMpirunOnSeveralProcessesIsRefused) {
  TempDir dir;
  write_text(dir.file("c.toml"), kGood);
  const std::string run =
      std::string(PACER_BINARY) + " run " + dir.file("c.toml") + " --out " + dir.file("out");
  // What Open MPI's mpirun puts in the environment of rank 0 and rank 2 of a 3-process job.
  CommandResult rank0 = run_command("env OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=3 " + run);
  EXPECT_EQ(rank0.exit_code, 1) << rank0.output;
  EXPECT_NE(error_line(rank0).find("add --engine mpi"), std::string::npos) << rank0.output;
  CommandResult rank2 = run_command("env OMPI_COMM_WORLD_RANK=2 OMPI_COMM_WORLD_SIZE=3 " + run);
  EXPECT_EQ(rank2.exit_code, 1);
  EXPECT_EQ(rank2.output, "");  // only rank 0 speaks
  EXPECT_FALSE(std::filesystem::exists(dir.file("out")));
  // One process (mpirun -np 1) is a plain simulator run.
  CommandResult single = run_command("env PMIX_RANK=0 PMIX_SIZE=1 " + run);
  EXPECT_EQ(single.exit_code, 0) << single.output;
}

TEST(Cli, CorruptIdxHeaderNamesTheFile) {
  TempDir dir;
  // Images file with a wrong magic number, labels file fine.
  std::string images(
      "\x00\x00\x08\x05\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x02"
      "abcd",
      20);
  std::string labels("\x00\x00\x08\x01\x00\x00\x00\x01\x03", 9);
  write_text(dir.file("img.idx"), images);
  write_text(dir.file("lab.idx"), labels);
  CommandResult r =
      run_with(dir, kGood,
               "--set data.source=idx --set data.train_images=" + dir.file("img.idx") +
                   " --set data.train_labels=" + dir.file("lab.idx") + " --set model.name=softmax");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(error_line(r).find(dir.file("img.idx")), std::string::npos) << r.output;
}

TEST(Cli, MissingConfigFileNamesIt) {
  CommandResult r = run_pacer("run /nonexistent/pacer.toml");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(error_line(r).find("/nonexistent/pacer.toml"), std::string::npos) << r.output;
}

TEST(Cli, FailedRunLeavesEarlierOutputsIntact) {
  TempDir dir;
  ASSERT_EQ(run_with(dir, kGood).exit_code, 0);
  std::string summary = read_text(dir.file("out/summary.json"));
  CommandResult bad = run_with(dir, kGood, "--set method.kk=1");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(read_text(dir.file("out/summary.json")), summary);
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(run_pacer("frobnicate").exit_code, 2);
  EXPECT_EQ(run_pacer("run").exit_code, 2);  // the config argument is missing
}

TEST(Cli, CompareRejectsAKeyTheSpecsMethodDoesNotRead) {
  TempDir dir;
  write_text(dir.file("c.toml"), kGood);
  CommandResult r = run_pacer("compare " + dir.file("c.toml") +
                              " --methods dgd,is-sgd:kk=2 --out " + dir.file("cmp"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(error_line(r).find("unknown key 'method.kk'"), std::string::npos) << r.output;
  CommandResult seeds = run_pacer("compare " + dir.file("c.toml") +
                                  " --methods dgd --seeds 0 --out " + dir.file("s"));
  EXPECT_EQ(seeds.exit_code, 1) << seeds.output;
  EXPECT_NE(error_line(seeds).find("--seeds"), std::string::npos) << seeds.output;
}

// kGood written for PGC-CR under the PGC paper's random stragglers.
const std::string kPgcCr = std::string(R"(
workers = 4
max_steps = 20
eval_every = 0
)") + kLeastSquaresTables + R"([optimizer]
lr = 0.05
[method]
name = "pgc-cr"
s = 1
decoder = "relaxed"
[timing]
model = "random_stragglers"
tau = 0.1
q = 0.25
delay_mean = 1.0
)";

TEST(Cli, SetMethodNameDropsTheReplacedMethodsKeysWithOneNote) {
  TempDir dir;
  CommandResult r = run_with(dir, kPgcCr, "--set method.name=dgd");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("dgd: "), std::string::npos) << r.output;  // the result line
  const std::string note = "--set method.name=dgd dropped method.decoder, method.s (from ";
  ASSERT_NE(r.output.find(note), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find(note), r.output.rfind(note)) << r.output;  // one note
  EXPECT_NE(read_text(dir.file("out/summary.json")).find("\"method\": \"dgd\""), std::string::npos);
  // The resolved config is what ran: it runs again as it is, with no note.
  const std::string resolved = read_text(dir.file("out/config.toml"));
  EXPECT_EQ(resolved.find("decoder"), std::string::npos) << resolved;
  CommandResult again =
      run_pacer("run " + dir.file("out/config.toml") + " --out " + dir.file("again"));
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(again.output.find("dropped"), std::string::npos) << again.output;
  // Without the switch the file's keys are used as before.
  EXPECT_EQ(run_with(dir, kPgcCr).exit_code, 0);
}

TEST(Cli, SetTimingModelDropsTheReplacedTimingModelsKeys) {
  TempDir dir;
  CommandResult r = run_with(dir, kPgcCr, "--set timing.model=fixed");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--set timing.model=fixed dropped timing.delay_mean, timing.q (from "),
            std::string::npos)
      << r.output;
  const std::string resolved = read_text(dir.file("out/config.toml"));
  EXPECT_EQ(resolved.find("delay_mean"), std::string::npos) << resolved;
  EXPECT_NE(resolved.find("tau = 0.1"), std::string::npos) << resolved;  // fixed reads tau
  EXPECT_NE(resolved.find("decoder"), std::string::npos) << resolved;    // method unswitched
}

TEST(Cli, AMisspeltCommandLineKeyIsStillAnError) {
  TempDir dir;
  CommandResult r = run_with(dir, kPgcCr, "--set method.decodr=exact");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(error_line(r).find("unknown key 'method.decodr'"), std::string::npos) << r.output;
  CommandResult switched =
      run_with(dir, kPgcCr, "--set method.name=gc-cr --set method.decodr=exact");
  EXPECT_EQ(switched.exit_code, 1) << switched.output;
  EXPECT_NE(error_line(switched).find("unknown key 'method.decodr'"), std::string::npos)
      << switched.output;
  // A file key the user overrides is theirs: switching away from its method makes it unknown.
  CommandResult typed = run_with(dir, kPgcCr, "--set method.decoder=exact --set method.name=dgd");
  EXPECT_EQ(typed.exit_code, 1) << typed.output;
  EXPECT_NE(error_line(typed).find("unknown key 'method.decoder'"), std::string::npos)
      << typed.output;
}

TEST(Cli, UnsetRemovesKeysInCommandLineOrder) {
  TempDir dir;
  // A key set and then unset is gone; one unset and then set is back.
  CommandResult r =
      run_with(dir, kGood,
               "--set method.kk=3 --unset method.kk --unset optimizer.lr --set optimizer.lr=0.02");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string resolved = read_text(dir.file("out/config.toml"));
  EXPECT_NE(resolved.find("lr = 0.02"), std::string::npos) << resolved;
  // Unsetting a random_stragglers key falls back to its default.
  CommandResult q = run_with(dir, kPgcCr, "--unset timing.q --unset method.decoder");
  EXPECT_EQ(q.exit_code, 0) << q.output;
  EXPECT_NE(read_text(dir.file("out/config.toml")).find("decoder = 'relaxed'"), std::string::npos);
}

TEST(Cli, UnsetOfAnAbsentKeyIsAnError) {
  TempDir dir;
  CommandResult r = run_with(dir, kGood, "--unset nosuch.key");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(error_line(r).find("--unset 'nosuch.key': no such key in "), std::string::npos)
      << r.output;
  write_text(dir.file("c.toml"), kGood);
  CommandResult compare = run_pacer("compare " + dir.file("c.toml") +
                                    " --methods dgd --unset nosuch.key --out " + dir.file("cmp"));
  EXPECT_EQ(compare.exit_code, 1) << compare.output;
  EXPECT_NE(error_line(compare).find("'nosuch.key'"), std::string::npos) << compare.output;
}

TEST(Cli, CompareSwitchesMethodsOfAConfigWrittenForAnother) {
  TempDir dir;
  write_text(dir.file("c.toml"), kPgcCr);
  // Neither dgd nor gc-cr reads method.decoder; dgd does not read method.s either.
  CommandResult r = run_pacer("compare " + dir.file("c.toml") +
                              " --methods dgd,gc-cr,pgc-cr:decoder=exact --out " + dir.file("cmp"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("method.decoder (for gc-cr)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("method.decoder, method.s (for dgd)"), std::string::npos) << r.output;
  EXPECT_EQ(read_text(dir.file("cmp/dgd/seed1/config.toml")).find("method.s"), std::string::npos);
  const std::string gc = read_text(dir.file("cmp/gc-cr/seed1/config.toml"));
  EXPECT_EQ(gc.find("decoder"), std::string::npos) << gc;
  EXPECT_NE(gc.find("s = 1"), std::string::npos) << gc;
  // Every method's resolved config holds the shared problem's defaults too, and runs as it is.
  EXPECT_NE(gc.find("scheme = 'iid'"), std::string::npos) << gc;
  CommandResult again =
      run_pacer("run " + dir.file("cmp/gc-cr/seed1/config.toml") + " --out " + dir.file("again"));
  EXPECT_EQ(again.exit_code, 0) << again.output;
  // A key a spec sets that its method does not read is still an error.
  CommandResult typo = run_pacer("compare " + dir.file("c.toml") +
                                 " --methods dgd,gc-cr:decoder=exact --out " + dir.file("t"));
  EXPECT_EQ(typo.exit_code, 1) << typo.output;
  EXPECT_NE(error_line(typo).find("unknown key 'method.decoder'"), std::string::npos)
      << typo.output;
}

TEST(Cli, FinalEvaluationCanBeSkipped) {
  TempDir dir;
  ASSERT_EQ(run_with(dir, kGood).exit_code, 0);
  EXPECT_NE(read_text(dir.file("out/summary.json")).find("\"full_loss\""), std::string::npos);
  ASSERT_EQ(run_with(dir, kGood, "--set eval_final=false").exit_code, 0);
  EXPECT_EQ(read_text(dir.file("out/summary.json")).find("\"full_loss\""), std::string::npos);
}

TEST(Cli, VersionAndHelp) {
  CommandResult v = run_pacer("version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.output.find("pacer "), std::string::npos);
  CommandResult h = run_pacer("--help");
  EXPECT_EQ(h.exit_code, 0);
  for (const char* sub : {"run", "compare", "data", "version"}) {
    EXPECT_NE(h.output.find(sub), std::string::npos) << sub;
  }
}

// `pacer methods` lists every registered method, one line each: name, kind, parameter, summary.
TEST(Cli, MethodsListsEveryMethodOnItsOwnLine) {
  const CommandResult r = run_pacer("methods");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const std::string& name : method_names()) {
    const std::regex line("\n" + name + " +(synchronous|asynchronous) +\\S+.* +[a-z]");
    EXPECT_TRUE(std::regex_search(r.output, line)) << name << "\n" << r.output;
  }
  EXPECT_NE(r.output.find("\npgc-cr               synchronous   s = 1"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("\nringmaster           asynchronous  R = n"), std::string::npos)
      << r.output;
  EXPECT_NE(run_pacer("--help").output.find("methods"), std::string::npos);
}

TEST(Cli, CompareRunsSeveralMethodsIntoOneTable) {
  TempDir dir;
  write_text(dir.file("c.toml"), kGood);
  CommandResult r = run_pacer("compare " + dir.file("c.toml") + " --methods dgd,is-sgd:k=1 " +
                              "--seeds 2 --out " + dir.file("cmp"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("| dgd |"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("| is-sgd:k=1 |"), std::string::npos) << r.output;
  // method, tuned value (none), runs, reached, diverged.
  std::string csv = read_text(dir.file("cmp/compare.csv"));
  EXPECT_NE(csv.find("is-sgd:k=1,,2,"), std::string::npos) << csv;
  // The report states the question and the table, and links the figures; the PNGs need gnuplot.
  const std::string report = read_text(dir.file("cmp/report.md"));
  EXPECT_NE(report.find("**Question.**"), std::string::npos) << report;
  EXPECT_NE(report.find("| is-sgd:k=1 |"), std::string::npos) << report;
  EXPECT_NE(report.find("(loss.png)"), std::string::npos) << report;
  if (run_command("command -v gnuplot").exit_code == 0) {
    EXPECT_GT(read_text(dir.file("cmp/loss.png")).size(), 1000u);
    EXPECT_TRUE(read_text(dir.file("cmp/loss.png.tmp")).empty());
  }
}

}  // namespace
}  // namespace pacer::testing
