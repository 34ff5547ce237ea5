// report.md and claims.csv of `pacer claims` (pacer/study/claims.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "pacer/study/claims.h"

namespace pacer {
namespace {

// "0.87 [0.81, 0.93]", "0.87 (one value: no interval)", "—".
std::string format_case(const ClaimCase& c) {
  const Estimate& e = c.estimate;
  if (e.empty()) return "—";
  if (!e.has_interval()) return fmt::format("{:.4g} (no interval)", e.mean);
  return fmt::format("{:.4g} [{:.4g}, {:.4g}]", e.mean, e.low, e.high);
}

std::string cell(std::string text) {
  std::replace(text.begin(), text.end(), '|', '/');
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

const ClaimResult* find_claim(const ClaimsResult& r, const std::string& id,
                              const std::string& regime) {
  for (const ClaimResult& c : r.claims) {
    if (c.id == id && c.regime == regime) return &c;
  }
  return nullptr;
}

// The claims' ids in file order, each once.
std::vector<const ClaimResult*> distinct_claims(const ClaimsResult& r) {
  std::vector<const ClaimResult*> out;
  for (const ClaimResult& c : r.claims) {
    if (std::none_of(out.begin(), out.end(), [&](const ClaimResult* o) { return o->id == c.id; })) {
      out.push_back(&c);
    }
  }
  return out;
}

std::string check_section(const CheckResult& check) {
  std::string md =
      fmt::format("*{}*{} — rule: {}. **{}**.\n\n", check.name,
                  check.informative ? " (for information: not part of the verdict)" : "",
                  check.rule, outcome_name(check.outcome));
  md +=
      "| case | estimate [95 % interval] | seeds | censored seeds make it | | outcome |\n"
      "|---|---|---|---|---|---|\n";
  for (const ClaimCase& c : check.cases) {
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", cell(c.label), format_case(c),
                      c.estimate.n == 0 ? std::string("—") : fmt::format("{}", c.estimate.n),
                      c.bound.empty() ? "—" : c.bound, cell(c.detail), outcome_name(c.outcome));
  }
  return md + "\n";
}

std::string claim_sections(const ClaimsResult& r) {
  std::string md;
  for (const ClaimResult* first : distinct_claims(r)) {
    const bool measured_only =
        std::all_of(first->checks.begin(), first->checks.end(),
                    [](const CheckResult& check) { return check.informative; });
    md += measured_only ? fmt::format("## Also measured ({}): {}\n\n", first->id, first->words)
                        : fmt::format("## Claim {}: {}\n\nThe paper: {}.\n\n", first->id,
                                      first->words, first->paper);
    for (const ClaimResult& c : r.claims) {
      if (c.id != first->id) continue;
      md += fmt::format("### {} regime: {}\n\n", c.regime, c.verdict);
      for (const CheckResult& check : c.checks) md += check_section(check);
    }
  }
  return md;
}

std::string table_sections(const ClaimsResult& r) {
  std::string md;
  for (const ClaimsTable& t : r.tables) {
    md += fmt::format("## {} ({} regime)\n\n|", t.title, t.regime);
    for (const std::string& axis : t.axes) md += fmt::format(" {} |", axis);
    md += " verdict (pacer's rule) |\n|";
    for (size_t i = 0; i <= t.axes.size(); ++i) md += "---|";
    md += "\n";
    for (const std::vector<std::string>& row : t.rows) {
      md += "|";
      for (const std::string& field : row) md += fmt::format(" {} |", cell(field));
      md += "\n";
    }
    md += "\n";
  }
  return md;
}

std::string run_line(const ClaimsResult& r, const ClaimsRunInfo& info) {
  const std::string wall =
      info.wall_seconds < 0
          ? "not recorded"
          : fmt::format("{} min {:02} s", static_cast<int>(info.wall_seconds) / 60,
                        static_cast<int>(info.wall_seconds) % 60);
  return fmt::format(
      "Mode: {}. Up to {} seeds per method (each case gives its own count). Wall time of the runs: "
      "{} on this machine ({} cores). "
      "Command: `{}`.{}\n",
      info.mode == "quick" ? "--quick" : "full", r.seeds, wall, info.cores, info.command,
      info.mode == "quick" && !r.quick_note.empty() ? " " + r.quick_note : "");
}

}  // namespace

std::string claims_verdicts_markdown(const ClaimsResult& r) {
  std::string md = "| # | claim | paper |";
  std::string rule = "|---|---|---|";
  for (const RegimeInfo& regime : r.regimes) {
    md += fmt::format(" {} regime |", regime.name);
    rule += "---|";
  }
  md += "\n" + rule + "\n";
  for (const ClaimResult* claim : distinct_claims(r)) {
    md += fmt::format("| {} | {} | {} |", claim->id, cell(claim->words), cell(claim->paper));
    for (const RegimeInfo& regime : r.regimes) {
      const ClaimResult* c = find_claim(r, claim->id, regime.name);
      if (c == nullptr) {
        md += " — (judged in another regime only; the set-up says why) |";
        continue;
      }
      std::vector<std::string> checks;
      for (const CheckResult& check : c->checks) {
        checks.push_back(fmt::format("{}{}: {}", check.informative ? "for information, " : "",
                                     check.name, outcome_name(check.outcome)));
      }
      md += fmt::format(" **{}** ({}) |", c->verdict,
                        cell(fmt::format("{}", fmt::join(checks, "; "))));
    }
    md += "\n";
  }
  return md;
}

std::string claims_report(const ClaimsResult& r, const ClaimsRunInfo& info) {
  std::string md = fmt::format("# {}\n\n{}\n## Regimes\n\n", r.title, run_line(r, info));
  for (const RegimeInfo& regime : r.regimes) {
    md += fmt::format("* **{}** (folder `{}/`): {}\n", regime.name, regime.name, regime.title);
  }
  md += fmt::format("\n## Set-up, and where it departs from the paper\n\n{}\n", r.setup);
  md += "## Verdicts\n\n" + claims_verdicts_markdown(r) +
        "\nHow a verdict is reached (the claims file states every rule and margin; the rules in "
        "full: "
        "include/pacer/study/claims.h): each case is judged on its 95 % Student-t interval over "
        "seeds (ratios and differences paired per seed); a case with fewer than two values or a "
        "diverged seed is undecided; seeds that missed the target make a value a bound, and only "
        "the outcomes that bound cannot reverse are drawn. A check holds or fails by its "
        "quantifier over the cases (every, some, most); a claim is not reproduced if a check "
        "fails, regime-dependent if a check holds in one setting (a sweep cell, a timing model) "
        "and fails in another, undecided if a check is, and reproduced only when every check "
        "holds; checks \"for information\" are shown, not judged.\n\n";
  md += claim_sections(r) + table_sections(r);
  md +=
      "## The comparisons behind the numbers\n\nEach with its own report.md (every method's "
      "table, figures, verdict and each method against the baseline, paired over seeds):\n\n";
  for (const std::string& source : r.sources) {
    md += fmt::format("* [{0}]({0}/report.md)\n", source);
  }
  return md;
}

std::string claims_csv(const ClaimsResult& r) {
  const auto quoted = [](const std::string& s) {
    std::string out = "\"";
    for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return out + "\"";
  };
  const auto number = [](double v) { return std::isnan(v) ? std::string() : fmt::format("{}", v); };
  std::string csv =
      "claim,regime,verdict,check,check_outcome,case,mean,low,high,bound,case_outcome\n";
  for (const ClaimResult& c : r.claims) {
    for (const CheckResult& check : c.checks) {
      for (const ClaimCase& k : check.cases) {
        csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", quoted(c.id), c.regime, c.verdict,
                           quoted(check.name), outcome_name(check.outcome), quoted(k.label),
                           number(k.estimate.mean), number(k.estimate.low), number(k.estimate.high),
                           quoted(k.bound), outcome_name(k.outcome));
      }
    }
  }
  return csv;
}

}  // namespace pacer
