#include "pacer/report/figure_palette.h"

#include <fmt/format.h>

#include <map>

namespace pacer::figure {
namespace {

struct Shade {
  const char* method;
  const char* colour;
};

struct Family {
  const char* name;
  std::vector<Shade> shades;
};

// Within a family the shades differ in lightness as well as hue, so that they stay apart for
// readers with a colour-vision deficiency; across families the hues differ. No method is black or
// grey: those explain line styles in the legends (figure_script.h: kStyleColour).
const std::vector<Family>& families() {
  static const std::vector<Family> kFamilies = {
      {"synchronous baselines", {{"dgd", "#5C3317"}, {"is-sgd", "#A67B5B"}}},
      {"gradient coding",
       {{"gc-fr", "#1D3F8F"},
        {"gc-cr", "#2C7BB6"},
        {"is-gc-fr", "#5BB6E8"},
        {"is-gc-cr", "#7B86C8"}}},
      {"pipelined gradient coding", {{"pgc-fr", "#E69F00"}, {"pgc-cr", "#D55E00"}}},
      {"asynchronous SGD",
       {{"asgd", "#1B7837"},
        {"rescaled-asgd", "#5AAE61"},
        {"delay-adaptive-asgd", "#9BBB2F"},
        {"ringmaster", "#1A9E8F"}}},
      {"round-based asynchronous",
       {{"rennala", "#762A83"}, {"malenia", "#C051A1"}, {"ringleader", "#A58BCB"}}},
  };
  return kFamilies;
}

// The shades of methods the table does not know, in the order they first appear.
constexpr const char* kOtherShades[] = {"#999933", "#5E5E2A", "#C4B56A"};
constexpr const char* kOtherFamily = "other methods";

}  // namespace

std::string method_of_spec(const std::string& spec) { return spec.substr(0, spec.find(':')); }

std::string dash_pattern(int variant) {
  // Solid, dashed, dotted, dash-dotted, long-dashed, dash-dot-dotted; then ever longer dashes.
  static const char* const kPatterns[] = {"1",         "(9,4)",  "(2,4)",
                                          "(9,4,2,4)", "(18,5)", "(9,4,2,4,2,4)"};
  constexpr int kCount = static_cast<int>(std::size(kPatterns));
  if (variant < 0) variant = 0;
  if (variant < kCount) return kPatterns[variant];
  return fmt::format("({},4)", 18 + 4 * (variant - kCount + 1));
}

std::vector<MethodStyle> method_styles(const std::vector<std::string>& specs) {
  std::vector<MethodStyle> styles;
  std::map<std::string, int> unknown;  // method -> its place among the unknown ones
  std::map<std::string, int> used;     // colour -> specs so far
  for (const std::string& spec : specs) {
    const std::string method = method_of_spec(spec);
    MethodStyle style;
    for (const Family& f : families()) {
      for (const Shade& s : f.shades) {
        if (method == s.method) style = {s.colour, "", 0, f.name};
      }
    }
    if (style.colour.empty()) {
      const int k = unknown.emplace(method, static_cast<int>(unknown.size())).first->second;
      style = {kOtherShades[k % std::size(kOtherShades)], "", 0, kOtherFamily};
    }
    style.variant = used[style.colour]++;
    style.dash = dash_pattern(style.variant);
    styles.push_back(std::move(style));
  }
  return styles;
}

std::vector<std::string> palette_methods() {
  std::vector<std::string> methods;
  for (const Family& f : families()) {
    for (const Shade& s : f.shades) methods.emplace_back(s.method);
  }
  return methods;
}

}  // namespace pacer::figure
