// Nearest-name suggestions and the origins errors name (core/suggest.h, Config::origin).
#include "pacer/core/suggest.h"

#include <gtest/gtest.h>

#include "pacer/core/config.h"
#include "pacer/core/error.h"

namespace pacer {
namespace {

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a pacer::Error";
  return "";
}

TEST(Suggest, EditDistanceCountsAdjacentSwapsAsOneEdit) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("max_tarin", "max_train"), 1u);  // a swap
  EXPECT_EQ(edit_distance("pgc-crr", "pgc-cr"), 1u);       // a deletion
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("ab", "ba"), 1u);
}

TEST(Suggest, NearestNameIsCloseEnoughOrNothing) {
  const std::vector<std::string> names = {"dgd", "is-sgd", "pgc-cr", "pgc-fr", "asgd"};
  EXPECT_EQ(nearest_name("pgc-crr", names), "pgc-cr");
  EXPECT_EQ(nearest_name("sgd", names), "dgd");            // one edit; ties keep the first
  EXPECT_EQ(nearest_name("pgc-cr", names), std::nullopt);  // already valid
  EXPECT_EQ(nearest_name("transformer", names), std::nullopt);
  EXPECT_EQ(did_you_mean("asdg", names), "; did you mean \"asgd\"?");
  EXPECT_EQ(did_you_mean("zzzzzz", names), "");
}

TEST(ConfigOrigin, ErrorsAboutCommandLineKeysNameTheCommandLine) {
  Config config = Config::parse("workers = 4\n[data]\nmax_train = 10\n", "run.toml");
  config.set("data.max_tarin=6000");
  config.set("seed=abc");
  EXPECT_EQ(config.origin("workers"), "run.toml");
  EXPECT_EQ(config.origin("data.max_tarin"), "--set data.max_tarin=6000");
  EXPECT_EQ(error_of([&] { config.get_int("seed", 0); }),
            "--set seed=abc: key 'seed': expected an integer, got string \"abc\"");
  config.get_int("workers", 1);
  config.get_int("data.max_train", 0);
  config.set("seed=2");
  config.get_int("seed", 0);
  EXPECT_EQ(error_of([&] { config.reject_unread_keys(); }),
            "--set data.max_tarin=6000: unknown key 'data.max_tarin' (misspelt, or not used by "
            "this method/model/timing model); did you mean \"data.max_train\"?");
}

TEST(ConfigOrigin, FileKeysNameTheFileAndAGivenOriginIsKept) {
  Config config = Config::parse("[data]\nmax_tarin = 10\nsource = \"csvv\"\n", "run.toml");
  config.get_int("data.max_train", 0);
  const std::string unknown = error_of([&] { config.reject_unread_keys(); });
  EXPECT_EQ(unknown.rfind("run.toml: unknown key 'data.max_tarin' (", 0), 0u) << unknown;
  EXPECT_NE(unknown.find("; did you mean \"data.max_train\"?"), std::string::npos) << unknown;
  EXPECT_EQ(error_of([&] {
              config.get_choice("data.source", "csv", {"csv", "npy"});
            }),
            "run.toml: key 'data.source': expected one of csv, npy, got \"csvv\"; did you mean "
            "\"csv\"?");
  config.set_string("method.name", "pgc-crr", "--methods pgc-crr");
  config.set("method.k=2", "--methods pgc-crr:k=2");
  EXPECT_EQ(config.origin("method.name"), "--methods pgc-crr");
  EXPECT_EQ(config.origin("method.k"), "--methods pgc-crr:k=2");
  // A plain set_* without an origin replaces the command line's words by the file's name.
  config.set_int("method.k", 3);
  EXPECT_EQ(config.origin("method.k"), "run.toml");
  // A table set on the command line covers the keys inside it.
  config.set("timing={model = \"fixed\"}");
  EXPECT_EQ(config.origin("timing.model"), "--set timing={model = \"fixed\"}");
  // Copies keep the origins.
  const Config copy = config;
  EXPECT_EQ(copy.origin("method.name"), "--methods pgc-crr");
}

}  // namespace
}  // namespace pacer
