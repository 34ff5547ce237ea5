// The one verdict rule (report/verdict.h), on hand-made comparisons: best only with every seed
// reached and every other method's paired interval above 1; undecided, with what would decide it,
// otherwise; nothing when no method reached the target everywhere.
#include "pacer/report/verdict.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pacer::testing {
namespace {

constexpr double kMissed = kNotAvailable;

// A comparison with a target: per method, each seed's time to target (kMissed: censored at the
// budget).
Comparison timed(const std::vector<std::pair<std::string, std::vector<double>>>& methods,
                 double budget = 100) {
  Comparison c;
  c.targets = {0.5};
  c.budget = Budget{Budget::Kind::kTime, budget, true};
  for (const auto& [spec, times] : methods) {
    MethodResult& m = c.methods.emplace_back();
    m.spec = spec;
    for (double t : times) {
      SeedRun& r = m.runs.emplace_back();
      r.reached = !std::isnan(t);
      r.time_to_target = t;
      r.end_time = r.reached ? t : budget;
    }
    summarize_method(m, true);
  }
  return c;
}

TEST(Verdict, AClearWinnerIsBest) {
  const Comparison c = timed({{"slow", {20, 24, 22, 21}}, {"fast", {10, 11, 10.5, 9.8}}});
  const Verdict v = decide(c);
  EXPECT_EQ(v.outcome, Verdict::Outcome::kBest);
  EXPECT_EQ(v.leader, 1);
  EXPECT_GT(v.versus_leader[0].low, 1);
  EXPECT_NE(describe_verdict(c, v).rfind("best: fast", 0), std::string::npos)
      << describe_verdict(c, v);
}

TEST(Verdict, TwoIdenticalMethodsAreUndecidedWhateverTheSeeds) {
  const Comparison c = timed({{"a", {10, 12, 9, 11, 10}}, {"b", {10, 12, 9, 11, 10}}});
  const Verdict v = decide(c);
  EXPECT_EQ(v.outcome, Verdict::Outcome::kUndecided);
  EXPECT_EQ(v.tied, (std::vector<int>{1}));
  const std::string text = describe_verdict(c, v);
  EXPECT_NE(text.find("undecided between a and b"), std::string::npos) << text;
  EXPECT_NE(text.find("no number of seeds"), std::string::npos) << text;
  EXPECT_EQ(format_versus_leader(v, 1), "1× [1, 1] (tie not excluded)");
}

TEST(Verdict, ATieAtTheTopSaysThatItsMethodsAreAheadOfTheRest) {
  const Comparison c =
      timed({{"a", {10, 12, 9, 11}}, {"b", {10.2, 11.8, 9.1, 11.2}}, {"slow", {30, 33, 29, 35}}});
  const Verdict v = decide(c);
  EXPECT_EQ(v.outcome, Verdict::Outcome::kUndecided);
  EXPECT_TRUE(v.tie_ahead_of_rest);
  EXPECT_NE(describe_verdict(c, v).find("each of them is ahead of every other method"),
            std::string::npos);
  // c is behind a on every seed by the same factor (its interval against a is [1.5, 1.5]) but not
  // clearly behind b, whose times spread widely: b ties with a, and the tie is not ahead of c.
  const Comparison loose =
      timed({{"a", {10, 10, 10, 10}}, {"b", {10, 14, 7, 12}}, {"c", {15, 15, 15, 15}}});
  const Verdict w = decide(loose);
  EXPECT_EQ(w.outcome, Verdict::Outcome::kUndecided);
  EXPECT_EQ(w.tied, (std::vector<int>{1}));
  EXPECT_FALSE(w.is_tie[2]);
  EXPECT_FALSE(w.tie_ahead_of_rest);
  EXPECT_EQ(describe_verdict(loose, w).find("each of them is ahead"), std::string::npos);
}

TEST(Verdict, ATieOfManyMethodsNamesTheClosestAndCountsTheRest) {
  // One method reaches the target; 28 others miss it on a seed each: all tie with it (censored),
  // and the sentence names four of them and counts the others instead of listing 28.
  std::vector<std::pair<std::string, std::vector<double>>> methods = {{"leader", {10, 11, 12}}};
  for (int k = 0; k < 28; ++k) methods.push_back({fmt::format("m{}", k), {9, kMissed, 11}});
  const Comparison c = timed(methods);
  const Verdict v = decide(c);
  ASSERT_EQ(v.outcome, Verdict::Outcome::kUndecided);
  ASSERT_EQ(v.tied.size(), 28u);
  const std::string text = describe_verdict(c, v);
  EXPECT_NE(text.find("and 24 more"), std::string::npos) << text;
  EXPECT_NE(text.find("(in the table, \"tie not excluded\")"), std::string::npos) << text;
  EXPECT_NE(v.what_would_decide.find("(missed 1 of 3)"), std::string::npos) << v.what_would_decide;
  EXPECT_LT(text.size(), 1200u) << text;
  // m20 is neither named in the sentence nor dropped from the verdict.
  EXPECT_EQ(text.find("m20"), std::string::npos) << text;
  EXPECT_TRUE(v.is_tie[21]);
}

TEST(Verdict, ACloseRaceSaysHowManySeedsWouldDecideIt) {
  const Comparison c = timed({{"a", {10, 12, 9}}, {"b", {10.5, 12.2, 9.3}}});
  const Verdict v = decide(c);
  EXPECT_EQ(v.outcome, Verdict::Outcome::kUndecided);
  EXPECT_GT(v.seeds_needed[1], 3);
  EXPECT_NE(v.what_would_decide.find(fmt::format("about {} seeds", v.seeds_needed[1])),
            std::string::npos)
      << v.what_would_decide;
}

TEST(Verdict, AMethodThatMissedASeedCannotWinButCanTie) {
  // "quick" is faster on the seeds it reached, but missed one: it is no contender, and its
  // censored time is only a lower bound, so the leader cannot be called best either.
  const Comparison c = timed({{"steady", {10, 11, 10}}, {"quick", {5, kMissed, 5}}});
  const Verdict v = decide(c);
  EXPECT_EQ(v.leader, 0);
  EXPECT_EQ(v.outcome, Verdict::Outcome::kUndecided);
  EXPECT_NE(v.what_would_decide.find("a budget at which quick reaches the target"),
            std::string::npos)
      << v.what_would_decide;
}

TEST(Verdict, NoMethodReachingTheTargetEverywhereGivesNoLeader) {
  const Comparison c = timed({{"a", {kMissed, 40}}, {"b", {kMissed, kMissed}}}, 50);
  const Verdict v = decide(c);
  EXPECT_EQ(v.outcome, Verdict::Outcome::kNoneReached);
  EXPECT_EQ(v.leader, -1);
  const std::string text = describe_verdict(c, v);
  EXPECT_NE(text.find("no method reached the target on every seed within 50 s"), std::string::npos)
      << text;
  EXPECT_NE(text.find("closest: a (1/2 seeds"), std::string::npos) << text;
}

TEST(Verdict, OneSeedDecidesNothing) {
  const Comparison c = timed({{"a", {10}}, {"b", {30}}});
  const Verdict v = decide(c);
  EXPECT_EQ(v.outcome, Verdict::Outcome::kUndecided);
  EXPECT_NE(v.what_would_decide.find("at least 2 seeds"), std::string::npos);
}

TEST(Verdict, WithoutATargetTheFinalLossDecidesAndADivergedMethodIsNoTie) {
  Comparison c;
  c.budget = Budget{Budget::Kind::kTime, 100, false};
  const std::vector<std::pair<std::string, std::vector<double>>> methods = {
      {"a", {0.50, 0.52, 0.51}}, {"b", {0.30, 0.31, 0.29}}, {"wild", {0.01, kMissed, 0.02}}};
  for (const auto& [spec, losses] : methods) {
    MethodResult& m = c.methods.emplace_back();
    m.spec = spec;
    for (double f : losses) {
      SeedRun& r = m.runs.emplace_back();
      r.diverged = std::isnan(f);
      r.final_loss = f;
    }
    summarize_method(m, false);
  }
  const Verdict v = decide(c);
  EXPECT_EQ(v.criterion, "final F");
  EXPECT_EQ(v.leader, 1);
  EXPECT_EQ(v.outcome, Verdict::Outcome::kBest);  // "wild" diverged on a seed: behind there
  EXPECT_FALSE(v.is_tie[2]);
}

}  // namespace
}  // namespace pacer::testing
