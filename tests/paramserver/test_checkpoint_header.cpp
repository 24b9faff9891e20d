// A checkpoint's header is data from disk, not to be trusted: the checksum covers it, and every
// field is range-checked before anything is allocated, with an error naming the file and the field.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/util/hash.h"
#include "paramserver/checkpoint.h"
#include "ps_fixture.h"

namespace dtbench::pstest {
namespace {

namespace fs = std::filesystem;

class CheckpointHeaderTest : public PsTest {
 protected:
  void SetUp() override {
    PsTest::SetUp();
    path_ = (fs::temp_directory_path() /
             ("dtbench-ps-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + ".ckpt"))
                .string();
    const CheckpointHeader header{0, 1, PsMode::Sync, {{0, 4}, {1, 4}}};
    const ShardState state{3, {1, 2, 3, 4, 5, 6, 7, 8}, "sgd", 3, {8, 7, 6, 5, 4, 3, 2, 1}};
    write_checkpoint(path_, header, state);
  }
  void TearDown() override { fs::remove(path_); }

  // Edits the header's JSON; with `reseal`, recomputes the checksum as a forger would.
  void edit(const std::function<void(nlohmann::json&)>& change, bool reseal) {
    std::ifstream in(path_, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    uint64_t header_bytes = 0;
    std::memcpy(&header_bytes, bytes.data() + 8, sizeof(header_bytes));
    nlohmann::json meta = nlohmann::json::parse(bytes.substr(16, header_bytes));
    change(meta);
    const std::string text = meta.dump();
    const std::string payload = bytes.substr(16 + header_bytes, bytes.size() - 16 - header_bytes - 8);
    uint64_t checksum = 0;
    std::memcpy(&checksum, bytes.data() + bytes.size() - 8, sizeof(checksum));
    if (reseal) checksum = fnv1a(payload, fnv1a(text));
    const uint64_t length = text.size();
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), 8);
    out.write(reinterpret_cast<const char*>(&length), sizeof(length));
    out << text << payload;
    out.write(reinterpret_cast<const char*>(&checksum), sizeof(checksum));
  }

  // The InputError's text, or "" when the file was accepted.
  std::string refusal() {
    try {
      read_checkpoint(path_);
    } catch (const InputError& error) {
      return error.what();
    }
    return "";
  }

  std::string path_;
};

TEST_F(CheckpointHeaderTest, AnEditedHeaderFailsTheChecksum) {
  ASSERT_EQ(refusal(), "");
  edit([](nlohmann::json& meta) { meta["version"] = 4; }, /*reseal=*/false);
  const std::string error = refusal();
  EXPECT_NE(error.find("checksum"), std::string::npos) << error;
  EXPECT_NE(error.find(path_), std::string::npos) << error;
}

TEST_F(CheckpointHeaderTest, FieldsOutOfRangeAreRefusedNamingTheField) {
  struct Case {
    std::string field;
    std::function<void(nlohmann::json&)> change;
  };
  const std::vector<Case> cases = {
      {"optimizer.steps", [](auto& m) { m["optimizer"]["steps"] = int64_t{1000000000000000}; }},
      {"optimizer.steps", [](auto& m) { m["optimizer"]["steps"] = -1; }},
      {"version", [](auto& m) { m["version"] = -1; }},
      {"version", [](auto& m) { m["version"] = int64_t{1} << 62; }},
      {"value_count", [](auto& m) { m["value_count"] = uint64_t{1} << 60; }},
      {"optimizer.state_count", [](auto& m) { m["optimizer"]["state_count"] = uint64_t{1} << 60; }},
      {"shard", [](auto& m) { m["shard"] = -1; }},
      {"shard_count", [](auto& m) { m["shard_count"] = 0; }},
      {"keys", [](auto& m) { m["keys"][1][1] = -5; }},
      {"mode", [](auto& m) { m["mode"] = "sideways"; }},
  };
  for (const Case& c : cases) {
    SetUp();
    SCOPED_TRACE(c.field);
    edit(c.change, /*reseal=*/true);
    const std::string error = refusal();
    EXPECT_NE(error.find("'" + c.field + "'"), std::string::npos) << error;
    EXPECT_NE(error.find(path_), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace dtbench::pstest
