// The bounds Config::parse puts on a config before toml++ reads it (nesting depth, size), and the
// scan behind them: it must count every level of valid TOML and nothing else.
#include <gtest/gtest.h>

#include <string>

#include "pacer/core/config.h"
#include "pacer/core/error.h"

namespace pacer {
namespace {

std::string key_of(int parts) {
  std::string key = "a";
  for (int i = 1; i < parts; ++i) key += ".a";
  return key;
}

std::string parse_error(const std::string& text) {
  try {
    Config::parse(text, "t.toml");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigLimits, DottedKeysUpToAHundredPartsAreRead) {
  EXPECT_EQ(parse_error(key_of(100) + " = 1\n"), "");
  EXPECT_NE(parse_error(key_of(101) + " = 1\n").find("t.toml:1: a key or value nested 101 levels"),
            std::string::npos);
}

TEST(ConfigLimits, HeaderAndKeyDepthsAddUp) {
  // '[', not "[": GCC 12 warns falsely (-Wrestrict, GCC bug 105329) on "x" + std::string&&.
  EXPECT_EQ(parse_error('[' + key_of(50) + "]\n" + key_of(50) + " = 1\n"), "");
  EXPECT_NE(parse_error("x = 1\n[" + key_of(50) + "]\n" + key_of(51) + " = 1\n").find("t.toml:3:"),
            std::string::npos);
  // Each header starts again from the top.
  EXPECT_EQ(parse_error('[' + key_of(99) + "]\n[b." + key_of(98) + "]\n"), "");
}

TEST(ConfigLimits, InlineTablesAndArraysNest) {
  std::string inline_tables = "x = ", close;
  for (int i = 0; i < 99; ++i) {
    inline_tables += "{a = ";
    close += "}";
  }
  EXPECT_EQ(parse_error(inline_tables + "1" + close + "\n"), "");
  EXPECT_NE(parse_error(inline_tables + "{a = 1}" + close + "}\n").find("nested 101 levels"),
            std::string::npos);
  std::string arrays = "x = " + std::string(101, '[') + std::string(101, ']') + "\n";
  EXPECT_NE(parse_error(arrays).find("t.toml:1:"), std::string::npos);
}

TEST(ConfigLimits, DotsInValuesStringsAndCommentsAreNotKeyParts) {
  const std::string dots(300, '.');
  const std::string text =
      "a = 1.5\n"
      "b = \"" +
      dots +
      "\"\n"
      "c = '" +
      dots +
      "'\n"
      "d = \"\"\"\nx" +
      dots +
      "\n[not.a.header]\n\"\"\"\"\n"
      "e = '''" +
      dots +
      "\n''''\n"
      "f = [1.5, 2.5, # " +
      dots + "\n  {k = \"v" + dots +
      "\"}, 3.5]\n"
      "g = \"\\\"" +
      dots +
      "\"\n"
      "\"quoted" +
      dots +
      "\".part = 2\n"
      "# " +
      dots +
      "\n"
      "[[t.u]]\nh = 1979-05-27T07:32:00.999Z\n";
  EXPECT_EQ(parse_error(text), "");
  Config config = Config::parse(text, "t.toml");
  EXPECT_EQ(config.get_double("a", 0), 1.5);
  EXPECT_EQ(config.get_string("d", ""), "x" + dots + "\n[not.a.header]\n\"");
  EXPECT_EQ(config.get_string("e", ""), dots + "\n'");
}

TEST(ConfigLimits, ASetKeyOfTooManyPartsIsRefused) {
  Config config;
  config.set(key_of(100) + "=1");
  try {
    config.set(key_of(101) + "=1");
    FAIL() << "a 101-part key was set";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a key of 101 parts"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pacer
