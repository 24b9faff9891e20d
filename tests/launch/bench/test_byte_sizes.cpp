#include <gtest/gtest.h>

#include "core/util/error.h"
#include "launch/bench/byte_sizes.h"

namespace dtbench {
namespace {

TEST(ByteSizes, ParsesUnitsAndRanges) {
  EXPECT_EQ(parse_byte_size("4B"), 4);
  EXPECT_EQ(parse_byte_size("4096"), 4096);
  EXPECT_EQ(parse_byte_size("64KiB"), 64 << 10);
  EXPECT_EQ(parse_byte_size("256MiB"), int64_t{256} << 20);
  EXPECT_EQ(parse_byte_size("2GiB"), int64_t{2} << 30);
  EXPECT_EQ(parse_size_range("4B:32B"), (std::vector<int64_t>{4, 8, 16, 32}));
  EXPECT_EQ(parse_size_range("1MiB"), (std::vector<int64_t>{1 << 20}));
  // Lists merge in ascending order, each size once.
  EXPECT_EQ(parse_size_range("16B:32B,12,8B:16B"), (std::vector<int64_t>{8, 12, 16, 32}));
  EXPECT_EQ(size_text(4), "4 B");
  EXPECT_EQ(size_text(64 << 10), "64 KiB");
  EXPECT_EQ(size_text(3 << 20), "3 MiB");
  EXPECT_EQ(size_text(1536), "1536 B");
}

TEST(ByteSizes, RejectsWhatItCannotRead) {
  for (const char* bad : {"", "MiB", "4MB", "-4B", "4 MiB", "99999999999999GiB"}) {
    EXPECT_THROW(parse_byte_size(bad), InputError) << bad;
  }
  EXPECT_THROW(parse_size_range("3B:64B"), InputError);   // not whole float32 elements
  EXPECT_THROW(parse_size_range("4B:8B,"), InputError);   // an empty item
  EXPECT_THROW(parse_size_range("4B,6B"), InputError);    // a listed size not whole float32 elements
  EXPECT_THROW(parse_size_range("64B:4B"), InputError);   // backwards
}

}  // namespace
}  // namespace dtbench
