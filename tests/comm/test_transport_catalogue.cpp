// The transport catalogue: every transport the registry can build has a row, an unknown name is an
// InputError naming the choices, and the rows answer what launchers, sweeps and reports ask.
#include <algorithm>

#include <gtest/gtest.h>

#include "comm/registry.h"
#include "comm/transport_catalogue.h"
#include "core/util/error.h"
#include "paramserver/register.h"

namespace dtbench {
namespace {

TEST(TransportCatalogue, EveryKnownAndEveryRegisteredTransportHasARow) {
  register_ps_transports({});  // the ones built here register as the command line would have them
  for (const auto& name : known_transports()) EXPECT_NE(find_transport_row(name), nullptr) << name;
  for (const auto& name : built_transports()) EXPECT_NE(find_transport_row(name), nullptr) << name;
  EXPECT_EQ(known_transports(), transport_names());
  EXPECT_EQ(transport_names(),
            (std::vector<std::string>{"none", "ring", "mpi", "nccl", "ps-sync", "ps-async"}));
}

TEST(TransportCatalogue, ATransportWithoutARowCannotRegister) {
  EXPECT_THROW(register_transport("carrier-pigeon", {}), LogicError);
}

TEST(TransportCatalogue, AnUnknownNameIsAnInputErrorNamingTheChoices) {
  try {
    transport_row("carrier-pigeon");
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_STREQ(error.what(),
                 "transport 'carrier-pigeon' is not known; choose one of none, ring, mpi, nccl, ps-sync, ps-async");
  }
  EXPECT_EQ(find_transport_row("carrier-pigeon"), nullptr);
}

TEST(TransportCatalogue, FamiliesAndLaunchers) {
  EXPECT_EQ(transport_row(kLocalTransport).launcher, Launcher::Alone);
  EXPECT_EQ(transport_row("ring").family, TransportFamily::MpiAllreduce);
  EXPECT_EQ(transport_row("mpi").launcher, Launcher::Mpirun);
  EXPECT_EQ(transport_row("nccl").family, TransportFamily::Nccl);
  EXPECT_TRUE(transport_row("nccl").over_mpi());
  EXPECT_FALSE(transport_row("ps-sync").over_mpi());
  EXPECT_EQ(transport_names_where([](const TransportRow& r) { return r.parameter_server(); }),
            (std::vector<std::string>{"ps-sync", "ps-async"}));
  EXPECT_EQ(transport_names_where([](const TransportRow& r) { return r.needs_servers(); }),
            (std::vector<std::string>{"ps-sync", "ps-async"}));
  EXPECT_EQ(transport_names_where([](const TransportRow& r) { return !r.synchronous; }),
            (std::vector<std::string>{"ps-async"}));
  EXPECT_EQ(transport_names_where([](const TransportRow& r) { return r.family == TransportFamily::MpiAllreduce; }),
            (std::vector<std::string>{"ring", "mpi"}));
}

TEST(TransportCatalogue, ChartColoursAreDistinct) {
  std::vector<size_t> colours;
  for (const auto& row : transport_catalogue()) colours.push_back(row.chart_colour);
  std::sort(colours.begin(), colours.end());
  EXPECT_EQ(std::adjacent_find(colours.begin(), colours.end()), colours.end());
}

}  // namespace
}  // namespace dtbench
