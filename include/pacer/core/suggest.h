// "Did you mean ...?": the valid name nearest to a misspelt one, for error messages about
// unknown keys, choices and method names.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pacer {

// The optimal-string-alignment distance between `a` and `b`: the fewest insertions, deletions,
// substitutions and swaps of two adjacent characters that turn one into the other
// ("max_tarin" -> "max_train" is 1).
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word` by edit_distance, when it is near enough to be a likely
// misspelling: at most max(2, |word| / 3) edits (so a short word is not "corrected" into an
// unrelated one). Ties go to the earlier candidate. nullopt when none is near, or `word` is
// itself a candidate.
std::optional<std::string> nearest_name(std::string_view word,
                                        const std::vector<std::string>& candidates);

// "; did you mean \"NAME\"?" for nearest_name's answer, "" when it has none: appended to an
// error message.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace pacer
