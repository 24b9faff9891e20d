// The blueprint's `ps:` section: servers as a list or "a:1,b:2", every key validated, and the
// worker settings the command line derives from it.
#include "launch/blueprint/blueprint.h"
#include "launch/commands.h"
#include "ps_fixture.h"

namespace dtbench::pstest {
namespace {

Blueprint parse(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return parse_blueprint(text, "test.yaml", overrides);
}

TEST(PsBlueprint, ReadsTheSectionAndDerivesWorkerOptions) {
  const Blueprint bp = parse("name: run7\ntransport: ps-async\n"
                             "ps: {servers: [10.0.0.1:50051, '10.0.0.2:50052'], placement: hash, key_kb: 64,\n"
                             "     timeout_s: 5, retries: 2, max_staleness: 3, checkpoint_every: 10}\n");
  EXPECT_EQ(bp.ps.servers, (std::vector<std::string>{"10.0.0.1:50051", "10.0.0.2:50052"}));
  EXPECT_EQ(bp.ps.run_id, "run7") << "the run id defaults to the blueprint's name";
  const PsTransportOptions options = ps_transport_options(bp, 1, 4);
  EXPECT_EQ(options.servers, bp.ps.servers);
  EXPECT_EQ(options.mode, PsMode::Async);
  EXPECT_EQ(options.rank, 1);
  EXPECT_EQ(options.world, 4);
  EXPECT_EQ(options.placement, PlacementPolicy::Hash);
  EXPECT_EQ(options.key_float_count, 64 * 1024 / 4);
  EXPECT_EQ(options.timeout_seconds, 5.0);
  EXPECT_EQ(options.retries, 2);
  EXPECT_EQ(options.run_id, "run7");
}

TEST(PsBlueprint, ServersFromTheCommandLine) {
  const Blueprint bp = parse("", {"transport=ps-sync", "ps.servers=hostA:50051,hostB:50051", "ps.run_id=exp"});
  EXPECT_EQ(bp.ps.servers, (std::vector<std::string>{"hostA:50051", "hostB:50051"}));
  EXPECT_EQ(bp.ps.run_id, "exp");
}

TEST(PsBlueprint, RejectsWhatCannotWork) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"transport: ps-sync\n", "needs parameter servers"},
      {"ps: {servers: 'hostA'}\n", "not host:port"},
      {"ps: {servers: 'hostA:port'}\n", "not host:port"},
      {"ps: {placement: random}\n", "ps.placement"},
      {"ps: {key_kb: 0}\n", "ps.key_kb"},
      {"ps: {timeout_s: 0}\n", "ps.timeout_s"},
      {"ps: {max_staleness: -1}\n", "ps.max_staleness"},
      {"ps: {tls_cert: a.pem}\n", "ps.tls_cert"},
      {"ps: {bogus: 1}\n", "unknown key 'ps.bogus'"},
  };
  for (const auto& [text, expected] : cases) {
    try {
      parse(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& error) {
      EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
    }
  }
}

}  // namespace
}  // namespace dtbench::pstest
