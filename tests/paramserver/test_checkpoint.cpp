// Checkpoints: a server restored from one resumes at the saved version with identical values and
// optimizer state, so the run continues bit for bit as if it had never stopped.
#include <filesystem>
#include <fstream>

#include "paramserver/checkpoint.h"
#include "ps_fixture.h"

namespace dtbench::pstest {
namespace {

namespace fs = std::filesystem;

class Checkpoint : public PsDirTest {
 protected:

  // One worker of a one-worker sync run doing steps [first, last).
  static void train(PsTransport& transport, Model& model, int first, int last) {
    for (int step = first; step < last; ++step) {
      compute_gradients(model, make_batch(500 + static_cast<uint64_t>(step), 4));
      transport.finish_step(model, step);
    }
  }
};

TEST_F(Checkpoint, RestoredServerResumesAtTheSavedVersionBitIdentically) {
  const fs::path path = dir_ / "a.ckpt";
  // Adam: its moments and step count must survive too.
  ServerSet a = start_servers(1, 1, PsMode::Sync, adam(), [&](ParameterServerOptions& o) { o.checkpoint_path = path; });
  auto model = small_model();
  PsTransport first(transport_options(a, PsMode::Sync, 0, 1));
  first.start(*model);
  train(first, *model, 0, 3);
  const std::vector<float> at_three = values_of(*model);

  ConnectionOptions line;
  line.address = a[0].address();
  line.security.auth_token = a[0].auth_token();
  PsConnection connection(line);
  const ps::CheckpointReply reply = connection.checkpoint();  // on demand, over the wire
  EXPECT_EQ(reply.version(), 3);
  EXPECT_EQ(reply.path(), path.string());
  fs::copy_file(path, dir_ / "at-3.ckpt");

  train(first, *model, 3, 6);
  const std::vector<float> uninterrupted = values_of(*model);
  const ShardState a_final = a[0].state();
  first.stop(*model);
  a.servers.clear();  // stopping writes the last checkpoint
  const auto [header, saved] = read_checkpoint(path.string());
  EXPECT_EQ(saved.version, 6);
  EXPECT_EQ(saved.values, a_final.values);
  EXPECT_EQ(saved.optimizer_state, a_final.optimizer_state);
  EXPECT_EQ(saved.optimizer_steps, 6);

  ServerSet b = start_servers(1, 1, PsMode::Sync, adam(), [&](ParameterServerOptions& o) {
    o.restore_path = (dir_ / "at-3.ckpt").string();
  });
  EXPECT_EQ(b[0].version(), 3);
  auto resumed = small_model(1234);  // its own weights do not matter: it pulls the server's
  PsTransport second(transport_options(b, PsMode::Sync, 0, 1));
  second.start(*resumed);
  EXPECT_EQ(second.versions(), std::vector<int64_t>{3});
  EXPECT_EQ(values_of(*resumed), at_three);
  train(second, *resumed, 3, 6);
  EXPECT_EQ(values_of(*resumed), uninterrupted) << "a restored run must continue bit for bit";
  EXPECT_EQ(b[0].version(), 6);
}

TEST_F(Checkpoint, EveryNUpdatesAndAtomically) {
  const fs::path path = dir_ / "every.ckpt";
  ServerSet s = start_servers(1, 1, PsMode::Sync, sgd_momentum(), [&](ParameterServerOptions& o) {
    o.checkpoint_path = path;
    o.checkpoint_every = 2;
  });
  auto model = small_model();
  PsTransport transport(transport_options(s, PsMode::Sync, 0, 1));
  transport.start(*model);
  train(transport, *model, 0, 3);
  ASSERT_TRUE(fs::exists(path));
  EXPECT_EQ(read_checkpoint(path.string()).second.version, 2);
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << "temporary file left behind";
  }
}

TEST_F(Checkpoint, CorruptOrMismatchedFilesAreRefused) {
  const fs::path path = dir_ / "good.ckpt";
  {
    ServerSet s = start_servers(2, 1, PsMode::Sync, sgd_momentum(), [&](ParameterServerOptions& o) {
      o.checkpoint_path = (dir_ / fmt::format("shard-{}.ckpt", o.shard)).string();
    });
  }
  fs::copy_file(dir_ / "shard-0.ckpt", path);
  // Another shard's checkpoint, or another key size, does not fit.
  EXPECT_THROW(start_servers(2, 1, PsMode::Sync, sgd_momentum(), [&](ParameterServerOptions& o) {
                 o.restore_path = (dir_ / "shard-1.ckpt").string();
               }),
               InputError);
  EXPECT_THROW(start_servers(1, 1, PsMode::Sync, sgd_momentum(), [&](ParameterServerOptions& o) {
                 o.restore_path = path.string();
                 o.placement.key_float_count = 1000;
               }),
               InputError);
  // An optimizer that does not match the saved state.
  EXPECT_THROW(start_servers(2, 1, PsMode::Sync, adam(), [&](ParameterServerOptions& o) {
                 o.restore_path = (dir_ / fmt::format("shard-{}.ckpt", o.shard)).string();
               }),
               InputError);
  // Truncated, or a flipped byte.
  const auto size = fs::file_size(path);
  fs::resize_file(path, size - 10);
  EXPECT_THROW(read_checkpoint(path.string()), InputError);
  fs::copy_file(dir_ / "shard-0.ckpt", path, fs::copy_options::overwrite_existing);
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(size - 100));
    file.put('\x7f');
  }
  EXPECT_THROW(read_checkpoint(path.string()), InputError);
  EXPECT_THROW(read_checkpoint((dir_ / "missing.ckpt").string()), InputError);
}

}  // namespace
}  // namespace dtbench::pstest
