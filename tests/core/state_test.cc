// The checkpoint archive (core/state.h): one visiting function saves and restores, and a saved
// state that does not fit the object it is loaded into is refused with a message saying where.
#include "pacer/core/state.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pacer/core/error.h"
#include "pacer/core/rng.h"

namespace pacer {
namespace {

struct Sample {
  int64_t step = 0;
  double time = 0;
  bool flag = false;
  std::string status;
  Vec x;
  std::vector<int64_t> counts;
  std::vector<bool> mask;
  std::vector<Vec> messages;
  std::map<int64_t, int64_t> histogram;
  std::optional<double> maybe;
  void checkpoint(StateArchive& a) {
    a.section("sample");
    a.io(step);
    a.io(time);
    a.io(flag);
    a.io(status);
    a.io(x);
    a.io(counts);
    a.io(mask);
    a.io(messages);
    a.io(histogram);
    a.io(maybe);
  }
};

Sample filled() {
  Sample s;
  s.step = -7;
  s.time = 0.1 + 0.2;  // a value with a long binary expansion: restored bit for bit
  s.flag = true;
  s.status = "running";
  s.x = Vec::LinSpaced(5, -1.0, 1.0);
  s.counts = {3, 0, 9};
  s.mask = {true, false, true, true};
  s.messages = {Vec::Constant(2, 1.5), Vec()};
  s.histogram = {{0, 4}, {3, 1}};
  s.maybe = 2.5;
  return s;
}

std::string saved(Sample s) {
  StateArchive a = StateArchive::for_saving();
  s.checkpoint(a);
  return a.bytes();
}

TEST(StateArchive, RoundTripRestoresEveryField) {
  const Sample original = filled();
  StateArchive in = StateArchive::for_loading(saved(original), "test");
  Sample restored;
  restored.checkpoint(in);
  in.expect_end();
  EXPECT_EQ(restored.step, original.step);
  EXPECT_EQ(restored.time, original.time);
  EXPECT_EQ(restored.flag, original.flag);
  EXPECT_EQ(restored.status, original.status);
  EXPECT_EQ(restored.x, original.x);
  EXPECT_EQ(restored.counts, original.counts);
  EXPECT_EQ(restored.mask, original.mask);
  ASSERT_EQ(restored.messages.size(), 2u);
  EXPECT_EQ(restored.messages[0], original.messages[0]);
  EXPECT_EQ(restored.messages[1].size(), 0);
  EXPECT_EQ(restored.histogram, original.histogram);
  EXPECT_EQ(restored.maybe, original.maybe);
  // Saving the restored object gives the same bytes.
  EXPECT_EQ(saved(restored), saved(original));
}

TEST(StateArchive, RngContinuesWhereItWasSaved) {
  Rng rng(11, "minibatch", 2);
  for (int i = 0; i < 5; ++i) rng.normal();  // leaves a cached spare normal
  StateArchive out = StateArchive::for_saving();
  rng.checkpoint(out);
  Rng restored(99, "other");
  StateArchive in = StateArchive::for_loading(out.bytes(), "test");
  restored.checkpoint(in);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(restored.normal(), rng.normal());
}

TEST(StateArchive, WrongSectionIsRefusedByName) {
  StateArchive out = StateArchive::for_saving();
  out.section("dgd");
  StateArchive in = StateArchive::for_loading(out.bytes(), "run/checkpoint.bin");
  try {
    in.section("pgc-cr");
    FAIL() << "a section of another component was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected the state of 'pgc-cr', found 'dgd'"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("run/checkpoint.bin"), std::string::npos) << e.what();
  }
}

TEST(StateArchive, ChangedFixedSizeIsRefused) {
  StateArchive out = StateArchive::for_saving();
  out.expect(12, "workers");
  StateArchive in = StateArchive::for_loading(out.bytes(), "test");
  try {
    in.expect(6, "workers");
    FAIL() << "a different worker count was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("workers was 12 when saved, 6 now"), std::string::npos)
        << e.what();
  }
}

TEST(StateArchive, TruncatedOrOverlongStateIsRefused) {
  const std::string bytes = saved(filled());
  for (size_t cut : {size_t{0}, size_t{1}, bytes.size() / 2, bytes.size() - 1}) {
    StateArchive in = StateArchive::for_loading(bytes.substr(0, cut), "test");
    Sample s;
    EXPECT_THROW(s.checkpoint(in), Error) << "cut at " << cut;
  }
  StateArchive in = StateArchive::for_loading(bytes + "x", "test");
  Sample s;
  s.checkpoint(in);
  EXPECT_THROW(in.expect_end(), Error);
}

TEST(StateArchive, EmptyOptionalsAtTheEndRoundTrip) {
  // Two unreached targets are two one-byte empty optionals, the last thing in the archive: the
  // count check must not ask for more than a byte each.
  std::vector<std::optional<double>> reached(2), restored;
  StateArchive out = StateArchive::for_saving();
  out.io(reached);
  StateArchive in = StateArchive::for_loading(out.bytes(), "test");
  in.io(restored);
  in.expect_end();
  EXPECT_EQ(restored, reached);
}

TEST(StateArchive, HugeCountsAreRefusedBeforeAllocating) {
  // A count field claiming 2^60 elements in a short buffer must not be trusted.
  StateArchive out = StateArchive::for_saving();
  uint64_t n = uint64_t{1} << 60;
  out.io(n);
  StateArchive in = StateArchive::for_loading(out.bytes(), "test");
  std::vector<int64_t> v;
  EXPECT_THROW(in.io(v), Error);
}

}  // namespace
}  // namespace pacer
