#include "pacer/core/config.h"

#include <gtest/gtest.h>

#include "pacer/core/error.h"

namespace pacer {
namespace {

TEST(Config, ReadsTypedValuesAndFallbacks) {
  Config c = Config::parse("n = 12\nlr = 0.5\n[method]\nname = \"dgd\"\n", "t.toml");
  EXPECT_EQ(c.get_int("n", 0), 12);
  EXPECT_DOUBLE_EQ(c.get_double("lr", 0), 0.5);
  EXPECT_DOUBLE_EQ(c.get_double("n", 0), 12.0);  // integers are numbers too
  EXPECT_EQ(c.get_string("method.name", "x"), "dgd");
  EXPECT_EQ(c.get_int("absent", 7), 7);
  EXPECT_NE(c.to_toml().find("absent = 7"), std::string::npos);
}

TEST(Config, WrongTypeNamesKeyAndExpectation) {
  Config c = Config::parse("n = \"twelve\"\n", "t.toml");
  try {
    c.get_int("n", 0);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "t.toml: key 'n': expected an integer, got string \"twelve\"");
  }
  Config d = Config::parse("x = 1.5\n", "t.toml");
  EXPECT_THROW(d.get_int("x", 0), Error);
}

TEST(Config, OverridesParseTomlValuesOrBareStrings) {
  Config c = Config::parse("[method]\nname = \"dgd\"\n", "t.toml");
  c.set("method.name=is-sgd");
  c.set("method.k=2");
  c.set("timing.tau=[1, 2.5]");
  c.set("flag = true");
  EXPECT_EQ(c.get_string("method.name", ""), "is-sgd");
  EXPECT_EQ(c.get_int("method.k", 0), 2);
  EXPECT_EQ(c.get_doubles("timing.tau", {}), (std::vector<double>{1.0, 2.5}));
  EXPECT_TRUE(c.get_bool("flag", false));
  EXPECT_THROW(c.set("novalue"), Error);
}

TEST(Config, UnreadKeysAreRejectedByName) {
  Config c = Config::parse("n = 3\n[method]\nname = \"dgd\"\nkk = 2\n", "t.toml");
  c.get_int("n", 0);
  c.get_string("method.name", "");
  EXPECT_EQ(c.unread_keys(), std::vector<std::string>{"method.kk"});
  try {
    c.reject_unread_keys();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown key 'method.kk'"), std::string::npos);
  }
}

TEST(Config, ChoiceListsValidValues) {
  Config c = Config::parse("m = \"foo\"\n", "t.toml");
  try {
    c.get_choice("m", "a", {"a", "b"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "t.toml: key 'm': expected one of a, b, got \"foo\"");
  }
}

// A pgc-cr config file, as the tests below load it.
constexpr const char* kPgcCr =
    "workers = 4\n[method]\nname = \"pgc-cr\"\ns = 2\ndecoder = \"relaxed\"\n"
    "[timing]\nmodel = \"random_stragglers\"\ntau = 0.1\nq = 0.25\ndelay_mean = 1.0\n";

// What a run of `method` reads of kPgcCr's keys (workers and the timing keys of
// random_stragglers; method.s for the coded methods).
void read_like_a_run(const Config& c) {
  c.get_int("workers", 12);
  c.get_string("timing.model", "fixed");
  c.get_double("timing.tau", 1.0);
  c.get_double("timing.q", 0.0);
  c.get_double("timing.delay_mean", 0.0);
  std::string method = c.get_string("method.name", "dgd");
  if (method == "gc-cr" || method == "pgc-cr") c.get_int("method.s", 1);
  if (method == "pgc-cr") c.get_string("method.decoder", "relaxed");
}

TEST(Config, SwitchingAComponentDropsTheFileKeysNothingReads) {
  Config c = Config::parse(kPgcCr, "pgc.toml");
  c.set("method.name=dgd");
  read_like_a_run(c);
  std::vector<Config::Switch> switches = c.drop_replaced_keys();
  ASSERT_EQ(switches.size(), 1u);
  EXPECT_EQ(switches[0].key, "method.name");
  EXPECT_EQ(switches[0].from, "pgc-cr");
  EXPECT_EQ(switches[0].to, "dgd");
  EXPECT_EQ(switches[0].dropped, (std::vector<std::string>{"method.decoder", "method.s"}));
  EXPECT_EQ(switches[0].describe("pgc.toml"),
            "--set method.name=dgd dropped method.decoder, method.s (from pgc.toml, where "
            "method.name = \"pgc-cr\"; unused with \"dgd\")");
  EXPECT_FALSE(c.has("method.s"));
  EXPECT_TRUE(c.unread_keys().empty());
  c.reject_unread_keys();
  // The resolved config is the one the run used: no dropped key, even commented.
  const std::string resolved = c.to_toml();
  EXPECT_EQ(resolved.find("decoder"), std::string::npos) << resolved;
  EXPECT_NE(resolved.find("name = 'dgd'"), std::string::npos) << resolved;
  EXPECT_NE(resolved.find("delay_mean"), std::string::npos) << resolved;
}

TEST(Config, KeysTheNewChoiceReadsStay) {
  Config c = Config::parse(kPgcCr, "pgc.toml");
  c.set("method.name=gc-cr");
  read_like_a_run(c);
  std::vector<Config::Switch> switches = c.drop_replaced_keys();
  ASSERT_EQ(switches.size(), 1u);
  EXPECT_EQ(switches[0].dropped, std::vector<std::string>{"method.decoder"});
  EXPECT_EQ(c.get_int("method.s", 0), 2);
}

TEST(Config, OnlyTheSwitchedComponentsTableIsDropped) {
  Config c = Config::parse(kPgcCr, "pgc.toml");
  c.set("method.name=dgd");
  c.get_int("workers", 12);
  c.get_string("method.name", "");
  c.get_string("timing.model", "");  // the timing keys stay unread: timing was not switched
  std::vector<Config::Switch> switches = c.drop_replaced_keys();
  ASSERT_EQ(switches.size(), 1u);
  EXPECT_EQ(c.unread_keys(),
            (std::vector<std::string>{"timing.delay_mean", "timing.q", "timing.tau"}));
  EXPECT_THROW(c.reject_unread_keys(), Error);
}

TEST(Config, AKeyAnOverrideSetIsNeverDropped) {
  Config c = Config::parse(kPgcCr, "pgc.toml");
  c.set("method.name=dgd");
  c.set("method.decodr=exact");  // misspelt on the command line
  c.set("method.s=3");           // the file's key, overridden: the user typed it
  read_like_a_run(c);
  std::vector<Config::Switch> switches = c.drop_replaced_keys();
  ASSERT_EQ(switches.size(), 1u);
  EXPECT_EQ(switches[0].dropped, std::vector<std::string>{"method.decoder"});
  EXPECT_EQ(c.unread_keys(), (std::vector<std::string>{"method.decodr", "method.s"}));
  try {
    c.reject_unread_keys();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown key 'method.decodr'"), std::string::npos);
  }
}

TEST(Config, SettingTheFilesOwnChoiceSwitchesNothing) {
  Config c = Config::parse("[method]\nname = \"dgd\"\nkk = 2\n", "t.toml");
  c.set("method.name=dgd");
  c.get_string("method.name", "");
  EXPECT_TRUE(c.drop_replaced_keys().empty());
  EXPECT_EQ(c.unread_keys(), std::vector<std::string>{"method.kk"});
  // Set away and back: still the file's choice.
  Config d = Config::parse("[method]\nname = \"dgd\"\nkk = 2\n", "t.toml");
  d.set("method.name=is-sgd");
  d.set_string("method.name", "dgd");
  d.get_string("method.name", "");
  EXPECT_TRUE(d.drop_replaced_keys().empty());
}

TEST(Config, SwitchesSurviveCopies) {
  Config c = Config::parse(kPgcCr, "pgc.toml");
  c.set("timing.model=fixed");
  Config copy = c;
  copy.get_int("workers", 12);
  copy.get_string("method.name", "");
  copy.get_int("method.s", 1);
  copy.get_string("method.decoder", "");
  copy.get_string("timing.model", "");
  copy.get_double("timing.tau", 1.0);
  std::vector<Config::Switch> switches = copy.drop_replaced_keys();
  ASSERT_EQ(switches.size(), 1u);
  EXPECT_EQ(switches[0].key, "timing.model");
  EXPECT_EQ(switches[0].dropped, (std::vector<std::string>{"timing.delay_mean", "timing.q"}));
  EXPECT_TRUE(c.has("timing.q"));  // the original is untouched
}

TEST(Config, UnsetRemovesFileKeysAndEarlierOverrides) {
  Config c = Config::parse(kPgcCr, "pgc.toml");
  c.unset("method.decoder");
  EXPECT_FALSE(c.has("method.decoder"));
  EXPECT_EQ(c.get_string("method.decoder", "exact"), "exact");  // the fallback now
  c.set("method.k=2");
  c.unset("method.k");
  EXPECT_FALSE(c.has("method.k"));
  c.unset("timing");  // a whole table
  EXPECT_FALSE(c.has("timing.q"));
  EXPECT_EQ(c.to_toml().find("[timing]"), std::string::npos);
  try {
    c.unset("nosuch.key");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--unset 'nosuch.key': no such key in pgc.toml or an earlier --set");
  }
  EXPECT_THROW(c.unset("workers.x"), Error);  // workers is a value, not a table
}

TEST(Config, UnsettingAChoiceSwitchesToTheDefault) {
  Config c = Config::parse(kPgcCr, "pgc.toml");
  c.unset("method.name");
  read_like_a_run(c);  // dgd, the default
  std::vector<Config::Switch> switches = c.drop_replaced_keys();
  ASSERT_EQ(switches.size(), 1u);
  EXPECT_EQ(switches[0].to, std::nullopt);
  EXPECT_EQ(switches[0]
                .describe("pgc.toml")
                .rfind("--unset method.name dropped method.decoder, "
                       "method.s",
                       0),
            0u);
}

TEST(Config, InvalidTomlAndMissingFileAreErrors) {
  EXPECT_THROW(Config::parse("n = = 3", "bad.toml"), Error);
  try {
    Config::load("/nonexistent/pacer.toml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/pacer.toml"), std::string::npos);
  }
}

}  // namespace
}  // namespace pacer
