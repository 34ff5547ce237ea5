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
