// A paper's claims judged from a claims file (study/claims.h), on hand-made comparisons written as
// pacer compare writes them (runs.csv): each rule's outcomes, the bounds that censored seeds
// make, the quantifiers, the claim's verdict per regime, the `leads` rule (verdict.h), values
// read from summary.json, sweeps' cells, and errors that name the file, the entry and the key.
#include "pacer/study/claims.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "pacer/core/error.h"
#include "pacer/report/comparison.h"
#include "test_util.h"

namespace pacer::testing {
namespace {

constexpr double kMissed = kNotAvailable;
constexpr double kBudget = 100;

using Methods = std::vector<std::pair<std::string, std::vector<double>>>;

// A comparison with a target: per method, each seed's steps (and time) to the target; kMissed:
// the seed missed it within the budget of 100 steps.
Comparison stepped(const Methods& methods) {
  Comparison c;
  c.targets = {0.5};
  c.budget = Budget{Budget::Kind::kSteps, kBudget, true};
  c.criterion = "time to target";
  for (const auto& [spec, steps] : methods) {
    MethodResult& m = c.methods.emplace_back();
    m.spec = spec;
    m.folder = spec;
    for (size_t k = 0; k < steps.size(); ++k) {
      SeedRun& r = m.runs.emplace_back();
      r.seed = k + 1;
      r.folder = fmt::format("{}/seed{}", spec, k + 1);
      r.reached = !std::isnan(steps[k]);
      r.status = r.reached ? "target_reached" : "max_steps";
      r.steps_to_target = r.time_to_target = steps[k];
      r.end_steps = r.end_time = r.reached ? steps[k] : kBudget;
      r.step_time = 1;
      r.units_per_job = 1;
      r.final_loss = 0.3;
    }
    summarize_method(m, true);
  }
  for (size_t k = 0; k < methods.front().second.size(); ++k) c.seeds.push_back(k + 1);
  return c;
}

void write_comparison(const std::string& folder, const Comparison& c) {
  std::filesystem::create_directories(folder);
  write_text(folder + "/runs.csv", seed_runs_csv(c));
}

// A claims file with one regime ("r") and one claim of the given checks (TOML text).
std::string claims_file(const std::string& checks) {
  return "title = \"T\"\nsetup = \"S\"\n[[regime]]\nname = \"r\"\ntitle = \"R\"\n"
         "[[claim]]\nid = \"1\"\nwords = \"W\"\npaper = \"P\"\n" +
         checks;
}

// One check comparing `methods` (TOML array text) with `against` on steps_to_target.
std::string check(const std::string& rule, const std::string& methods = "[\"m\"]",
                  const std::string& quantifier = "every", const std::string& name = "c") {
  return fmt::format(
      "[[claim.check]]\nname = \"{}\"\nin = [\"cmp\"]\nmethods = {}\nagainst = \"base\"\n"
      "metric = \"steps_to_target\"\nquantifier = \"{}\"\n{}\n",
      name, methods, quantifier, rule);
}

class Claims : public ::testing::Test {
 protected:
  ClaimsResult judge(const Methods& methods, const std::string& checks) {
    write_comparison(dir_.file("out/r/cmp"), stepped(methods));
    write_text(dir_.file("claims.toml"), claims_file(checks));
    return evaluate_claims(dir_.file("claims.toml"), dir_.file("out"));
  }
  Outcome case_outcome(const Methods& methods, const std::string& rule) {
    const ClaimsResult r = judge(methods, check(rule));
    return r.claims.at(0).checks.at(0).cases.at(0).outcome;
  }
  TempDir dir_;
};

const Methods kHalf = {{"base", {100, 80, 90, 96}}, {"m", {50, 41, 44, 49}}};  // m ≈ 0.5× base

TEST_F(Claims, EachRuleHoldsFailsOrIsUndecidedOnTheInterval) {
  EXPECT_EQ(case_outcome(kHalf, "rule = \"below\"\nbound = 1"), Outcome::kHolds);
  EXPECT_EQ(case_outcome(kHalf, "rule = \"above\"\nbound = 1"), Outcome::kFails);
  EXPECT_EQ(case_outcome(kHalf, "rule = \"within\"\nbounds = [0.8, 1.25]"), Outcome::kFails);
  EXPECT_EQ(case_outcome(kHalf, "rule = \"within\"\nbounds = [0.4, 0.6]"), Outcome::kHolds);
  // reaches [x, y]: significant (below y) and the interval reaching x.
  EXPECT_EQ(case_outcome(kHalf, "rule = \"reaches\"\nbounds = [0.55, 1]"), Outcome::kHolds);
  EXPECT_EQ(case_outcome(kHalf, "rule = \"reaches\"\nbounds = [0.3, 1]"), Outcome::kFails);
  EXPECT_EQ(case_outcome(kHalf, "rule = \"reaches\"\nbounds = [0.49, 0.5]"), Outcome::kUndecided);
  // The interval straddles 0.5: neither above nor below it.
  EXPECT_EQ(case_outcome(kHalf, "rule = \"below\"\nbound = 0.5"), Outcome::kUndecided);
}

TEST_F(Claims, TheCaseCarriesThePairedRatioAndItsInterval) {
  const ClaimsResult r = judge(kHalf, check("rule = \"below\"\nbound = 1"));
  const ClaimCase& c = r.claims.at(0).checks.at(0).cases.at(0);
  EXPECT_EQ(c.label, "m");
  EXPECT_EQ(c.estimate.n, 4);
  EXPECT_NEAR(c.estimate.mean, std::pow(0.5 * 41 / 80 * 44 / 90 * 49 / 96, 0.25), 1e-12);
  EXPECT_LT(c.estimate.high, 1);
  EXPECT_EQ(r.seeds, 4);
}

TEST_F(Claims, ACensoredNumeratorIsALowerBoundThatCannotHoldBelow) {
  // m missed the target on seed 4 (counted at the budget, 100): its ratio there is a lower bound.
  const Methods censored = {{"base", {100, 80, 90, 96}}, {"m", {50, 41, 44, kMissed}}};
  // The interval of the bounds may lie below 1, but the truth could be above it.
  EXPECT_EQ(case_outcome(censored, "rule = \"below\"\nbound = 1.5"), Outcome::kUndecided);
  // That it lies above 0.3 stays true of the truth.
  EXPECT_EQ(case_outcome(censored, "rule = \"above\"\nbound = 0.3"), Outcome::kHolds);
  const ClaimsResult r = judge(censored, check("rule = \"above\"\nbound = 0.3"));
  EXPECT_EQ(r.claims[0].checks[0].cases[0].bound, "lower bound");
}

TEST_F(Claims, ACensoredDenominatorIsAnUpperBound) {
  const Methods censored = {{"base", {100, 80, 90, kMissed}}, {"m", {50, 41, 44, 49}}};
  EXPECT_EQ(case_outcome(censored, "rule = \"below\"\nbound = 1"), Outcome::kHolds);
  EXPECT_EQ(case_outcome(censored, "rule = \"above\"\nbound = 0.1"), Outcome::kUndecided);
}

TEST_F(Claims, QuantifiersAndTheClaimsVerdict) {
  const Methods three = {{"base", {100, 80, 90, 96}},
                         {"half", {50, 41, 44, 49}},
                         {"same", {100, 80, 90, 96}},
                         {"double", {200, 161, 181, 190}}};
  const std::string methods = "[\"half\", \"same\", \"double\"]";
  const auto verdict = [&](const std::string& quantifier, const std::string& rule) {
    return judge(three, check(rule, methods, quantifier)).claims.at(0).verdict;
  };
  // half holds, same is a tie (undecided), double fails: one counterexample fails "every" (the
  // cases are methods of one comparison, not regimes).
  EXPECT_EQ(verdict("every", "rule = \"below\"\nbound = 1"), "not reproduced");
  EXPECT_EQ(verdict("some", "rule = \"below\"\nbound = 1"), "reproduced");
  EXPECT_EQ(verdict("most", "rule = \"below\"\nbound = 1"), "undecided");
  EXPECT_EQ(verdict("every", "rule = \"below\"\nbound = 0.1"), "not reproduced");
  // half and same hold below 1.5, double fails.
  EXPECT_EQ(verdict("most", "rule = \"below\"\nbound = 1.5"), "reproduced");
  EXPECT_EQ(verdict("every", "rule = \"below\"\nbound = 3"), "reproduced");
  // Nothing fails, something is undecided.
  EXPECT_EQ(verdict("every", "rule = \"below\"\nbound = 2.5"), "reproduced");
  EXPECT_EQ(verdict("every", "rule = \"above\"\nbound = 0.5"), "undecided");
}

TEST_F(Claims, AnInformativeCheckDoesNotDecideTheClaim) {
  const std::string checks =
      check("rule = \"below\"\nbound = 1") +
      check("rule = \"above\"\nbound = 1\ninformative = true", "[\"m\"]", "every", "info");
  const ClaimsResult r = judge(kHalf, checks);
  EXPECT_EQ(r.claims[0].checks[1].outcome, Outcome::kFails);
  EXPECT_EQ(r.claims[0].verdict, "reproduced");
}

TEST_F(Claims, LeadsAppliesPacersVerdictRuleToEachGroup) {
  const Methods m = {{"base", {100, 80, 90, 96}},
                     {"fast", {50, 41, 44, 49}},
                     {"slow", {200, 161, 181, 190}},
                     {"twin", {100, 80, 90, 96}}};
  const std::string leads =
      "[[claim.check]]\nname = \"lead\"\nin = [\"cmp\"]\nrule = \"leads\"\ngroups = [\n"
      "  { label = \"g1\", candidates = [\"fast\"], rivals = [\"base\", \"slow\"] },\n"
      "  { label = \"g2\", candidates = [\"slow\"], rivals = [\"base\"] },\n"
      "  { label = \"g3\", candidates = [\"twin\"], rivals = [\"base\"] },\n]\n";
  const ClaimsResult r = judge(m, leads);
  const std::vector<ClaimCase>& cases = r.claims[0].checks[0].cases;
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0].outcome, Outcome::kHolds);
  EXPECT_NE(cases[0].detail.find("best: fast"), std::string::npos) << cases[0].detail;
  EXPECT_EQ(cases[1].outcome, Outcome::kFails);
  // The same times as candidate and rival: a tie that holds both, undecided.
  EXPECT_EQ(cases[2].outcome, Outcome::kUndecided);
  EXPECT_EQ(r.claims[0].verdict, "not reproduced");
}

TEST_F(Claims, EqualsReadsANumberFromEverySeedsSummary) {
  const Comparison c = stepped(kHalf);
  write_comparison(dir_.file("out/r/cmp"), c);
  for (int k = 1; k <= 4; ++k) {
    std::filesystem::create_directories(dir_.file(fmt::format("out/r/cmp/m/seed{}", k)));
    write_text(dir_.file(fmt::format("out/r/cmp/m/seed{}/summary.json", k)),
               fmt::format("{{\"method_stats\": {{\"coefficient\": {}}}}}", k == 4 ? 1.2004 : 1.2));
  }
  const auto outcome = [&](double tolerance) {
    write_text(dir_.file("claims.toml"),
               claims_file(fmt::format(
                   "[[claim.check]]\nname = \"c\"\nin = [\"cmp\"]\nmethods = [\"m\"]\n"
                   "compare = \"value\"\nmetric = \"summary:coefficient\"\nrule = \"equals\"\n"
                   "bound = [1.2]\ntolerance = {}\n",
                   tolerance)));
    return evaluate_claims(dir_.file("claims.toml"), dir_.file("out"))
        .claims[0]
        .checks[0]
        .cases[0]
        .outcome;
  };
  EXPECT_EQ(outcome(0.0005), Outcome::kHolds);
  EXPECT_EQ(outcome(0.0001), Outcome::kFails);
}

TEST_F(Claims, ADistanceTransformMapsALossToTheDistanceToItsMinimiser) {
  Comparison c = stepped(kHalf);
  // F = 2.5 + 0.25·d²: final losses 2.5 + 0.25·0.01 give d = 0.1 on every seed.
  for (SeedRun& r : c.methods[1].runs) r.final_loss = 2.5 + 0.25 * 0.01;
  write_comparison(dir_.file("out/r/cmp"), c);
  write_text(dir_.file("claims.toml"),
             claims_file("[[claim.check]]\nname = \"c\"\nin = [\"cmp\"]\nmethods = [\"m\"]\n"
                         "compare = \"value\"\nmetric = \"final_loss\"\ntransform = \"distance\"\n"
                         "minimum = 2.5\ncurvature = 0.25\nrule = \"below\"\nbound = 0.2\n"));
  const ClaimsResult r = evaluate_claims(dir_.file("claims.toml"), dir_.file("out"));
  const ClaimCase& k = r.claims[0].checks[0].cases[0];
  EXPECT_NEAR(k.estimate.mean, 0.1, 1e-9);
  // Every seed equal: a zero-width interval below 0.2.
  EXPECT_EQ(k.outcome, Outcome::kHolds);
}

TEST_F(Claims, ASweepFolderStandsForEachOfItsCells) {
  write_comparison(dir_.file("out/r/sw/cells/0"), stepped(kHalf));
  write_comparison(dir_.file("out/r/sw/cells/1"),
                   stepped({{"base", {100, 80, 90, 96}}, {"m", {200, 161, 181, 190}}}));
  write_text(dir_.file("out/r/sw/sweep.csv"),
             "cell,timing.k,rank,speedup_over_dgd_mean\n0,1,1,\n0,1,2,\n1,4,1,\n1,4,2,\n");
  write_text(dir_.file("claims.toml"),
             claims_file("[[claim.check]]\nname = \"c\"\nin = [\"sw\"]\nmethods = [\"m\"]\n"
                         "against = \"base\"\nmetric = \"steps_to_target\"\nrule = \"below\"\n"
                         "bound = 1\n") +
                 "[[table]]\ntitle = \"map\"\nin = \"sw\"\nregime = \"r\"\n");
  const ClaimsResult r = evaluate_claims(dir_.file("claims.toml"), dir_.file("out"));
  const std::vector<ClaimCase>& cases = r.claims[0].checks[0].cases;
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].label, "timing.k = 1 · m");
  EXPECT_EQ(cases[0].outcome, Outcome::kHolds);
  EXPECT_EQ(cases[1].outcome, Outcome::kFails);
  EXPECT_EQ(r.claims[0].verdict, "regime-dependent");
  ASSERT_EQ(r.tables.size(), 1u);
  EXPECT_EQ(r.tables[0].axes, std::vector<std::string>{"timing.k"});
  ASSERT_EQ(r.tables[0].rows.size(), 2u);
  EXPECT_NE(r.tables[0].rows[0][1].find("best: m"), std::string::npos) << r.tables[0].rows[0][1];
}

TEST_F(Claims, TheReportStatesEveryVerdictAndRule) {
  const ClaimsResult r = judge(kHalf, check("rule = \"within\"\nbounds = [0.4, 0.6]"));
  const std::string md = claims_report(r, ClaimsRunInfo{"quick", "scripts/x.sh --quick", 75, 2});
  EXPECT_NE(md.find("# T"), std::string::npos);
  EXPECT_NE(md.find("1 min 15 s"), std::string::npos) << md;
  EXPECT_NE(md.find("**reproduced**"), std::string::npos) << md;
  EXPECT_NE(md.find("within [0.4, 0.6] in every case"), std::string::npos) << md;
  const std::string csv = claims_csv(r);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "claim,regime,verdict,check,check_outcome,case,mean,low,high,bound,case_outcome");
  EXPECT_NE(csv.find("\"1\",r,reproduced,\"c\",holds,\"m\","), std::string::npos) << csv;
}

// The message of the Error that judging `checks` throws ("" when none).
std::string error_of(const std::string& text, const std::string& dir) {
  write_text(dir + "/claims.toml", text);
  try {
    evaluate_claims(dir + "/claims.toml", dir + "/out");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_F(Claims, ErrorsNameTheFileTheEntryAndTheKey) {
  write_comparison(dir_.file("out/r/cmp"), stepped(kHalf));
  const std::string path = dir_.file("claims.toml");
  std::string e = error_of(claims_file(check("rule = \"belw\"\nbound = 1")), dir_.path());
  EXPECT_NE(e.find(path + ": claim '1', check 'c', rule: expected one of within, above"),
            std::string::npos)
      << e;
  e = error_of(claims_file(check("rule = \"below\"\nbound = 1\nbuond = 2")), dir_.path());
  EXPECT_NE(e.find("claim '1', check 'c': unknown key 'buond'"), std::string::npos) << e;
  e = error_of(claims_file(check("rule = \"within\"\nbounds = [2, 1]")), dir_.path());
  EXPECT_NE(e.find("bounds: expected two numbers [low, high] with low < high"), std::string::npos)
      << e;
  e = error_of(claims_file(check("rule = \"below\"\nbound = 1", "[\"nobody\"]")), dir_.path());
  EXPECT_NE(e.find("no method 'nobody'"), std::string::npos) << e;
  std::string absent = check("rule = \"below\"\nbound = 1");
  absent.replace(absent.find("\"cmp\""), 5, "\"absent\"");
  e = error_of(claims_file(absent), dir_.path());
  EXPECT_NE(e.find("out/r/absent/runs.csv: no such file"), std::string::npos) << e;
  e = error_of(claims_file("[[claim.check]]\nname = \"c\"\nin = [\"cmp\"]\nmethods = [\"m\"]\n"
                           "metric = \"steps_to_target\"\nrule = \"below\"\nbound = 1\n"),
               dir_.path());
  EXPECT_NE(e.find("claim '1', check 'c', against: expected a method spec"), std::string::npos)
      << e;
  e = error_of(claims_file(check("rule = \"below\"\nbound = 1", "[\"base\"]")), dir_.path());
  EXPECT_NE(e.find("a method against itself is always a tie"), std::string::npos) << e;
  e = error_of(
      claims_file(check("rule = \"below\"\nbound = 1") + check("rule = \"above\"\nbound = 1")),
      dir_.path());
  EXPECT_NE(e.find("checks of different names ('c' twice)"), std::string::npos) << e;
  e = error_of("title = \"T\"\n", dir_.path());
  EXPECT_NE(e.find(path + ": setup: expected a string (the key is missing)"), std::string::npos)
      << e;
}

}  // namespace
}  // namespace pacer::testing
