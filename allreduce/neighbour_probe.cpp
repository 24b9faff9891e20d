// Both links at once, each on its own clock. For each neighbour this rank plays two parts:
//
//   initiator:  ping ──▶ neighbour, wait for its echo, next round (the round trip is timed)
//   responder:  neighbour's ping ──▶ echo it straight back
//
//   rank r ── ping (kPingRightward) ──▶ right      left ── ping (kPingRightward) ──▶ rank r
//   rank r ◀─ echo (kEchoLeftward) ──── right      left ◀─ echo (kEchoLeftward) ─── rank r
//   and the mirror image with kPingLeftward / kEchoRightward.
//
// Rounds 0 .. small_round_trips−1 carry small_bytes, the last round large_bytes. One event loop
// serves all four receives (pings and echoes from both sides), so a dead right neighbour does
// not stop this rank answering its left one: each rank's result speaks for its own two links
// only. Distinct tags keep the directions apart when left and right are the same rank (two ranks).
#include "allreduce/neighbour_probe.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "allreduce/mpi_check.h"
#include "core/util/error.h"

namespace dtbench {

namespace {

using Clock = std::chrono::steady_clock;

enum Tag : int { kPingRightward = 101, kPingLeftward, kEchoLeftward, kEchoRightward };
// The four receives: pings this rank answers, echoes of its own pings.
enum Slot : int { kPingFromLeft, kPingFromRight, kEchoFromLeft, kEchoFromRight, kSlots };

class Prober {
 public:
  Prober(const NeighbourProbeOptions& o, int left, int right)
      : o_(o), rounds_(o.small_round_trips + 1), peer_{left, right, left, right}, ping_(buffer_bytes()) {
    for (size_t i = 0; i < ping_.size(); ++i) ping_[i] = static_cast<unsigned char>(i * 131 + 7);
    for (auto& in : in_) in.resize(ping_.size());
    rtt_[kEchoFromLeft].resize(static_cast<size_t>(rounds_));
    rtt_[kEchoFromRight].resize(static_cast<size_t>(rounds_));
  }

  // Throws IoError naming what is missing when nothing arrives for the policy's timeout.
  void run() {
    for (int s = 0; s < kSlots; ++s) post_receive(s);
    send_ping(kEchoFromLeft);
    send_ping(kEchoFromRight);
    WaitPolicy wait = o_.wait;
    wait.describe = [this] { return missing(); };
    for (int slot; (slot = wait_any(receives_, wait)) >= 0;) {
      if (slot == kPingFromLeft || slot == kPingFromRight) {
        answer(slot, wait);
      } else {
        echo_arrived(slot);
      }
    }
    wait.describe = [] { return std::string("sends to the neighbours did not complete"); };
    wait_all(sends_, wait);
  }

  const std::vector<double>& round_trips(Slot echo) const { return rtt_[echo]; }
  int rounds() const { return rounds_; }
  bool large_echo_intact(Slot echo) const { return in_[echo] == ping_; }

 private:
  static constexpr int kTag[kSlots] = {kPingRightward, kPingLeftward, kEchoRightward, kEchoLeftward};
  static constexpr int kPingTag[kSlots] = {0, 0, kPingLeftward, kPingRightward};  // by echo slot
  static constexpr int kEchoTag[kSlots] = {kEchoLeftward, kEchoRightward, 0, 0};  // by ping slot
  static constexpr const char* kName[kSlots] = {"ping from left", "ping from right", "echo from left",
                                                "echo from right"};

  size_t buffer_bytes() const { return static_cast<size_t>(std::max(o_.small_bytes, o_.large_bytes)); }
  int bytes_of(int round) const {
    return static_cast<int>(round + 1 < rounds_ ? o_.small_bytes : o_.large_bytes);
  }

  void post_receive(int slot) {
    // Posted for the largest message; a smaller one lands in its beginning.
    check_mpi(MPI_Irecv(in_[slot].data(), static_cast<int>(in_[slot].size()), MPI_BYTE, peer_[slot], kTag[slot],
                        o_.comm, &receives_[slot]),
              "MPI_Irecv");
  }

  void send_ping(int echo_slot) {
    sent_at_[echo_slot] = Clock::now();
    sends_.push_back(MPI_REQUEST_NULL);
    check_mpi(MPI_Isend(ping_.data(), bytes_of(done_[echo_slot]), MPI_BYTE, peer_[echo_slot], kPingTag[echo_slot],
                        o_.comm, &sends_.back()),
              "MPI_Isend");
  }

  void answer(int slot, const WaitPolicy& wait) {
    MPI_Request echo = MPI_REQUEST_NULL;
    check_mpi(MPI_Isend(in_[slot].data(), bytes_of(done_[slot]), MPI_BYTE, peer_[slot], kEchoTag[slot], o_.comm,
                        &echo),
              "MPI_Isend");
    if (++done_[slot] == rounds_) {
      sends_.push_back(echo);
      return;
    }
    // The next ping lands where this echo is sent from. The neighbour has its echo receive
    // posted before it pings, so this completes without waiting on anything else of ours.
    wait_all({&echo, 1}, wait);
    post_receive(slot);
  }

  void echo_arrived(int slot) {
    const int round = done_[slot]++;
    rtt_[slot][static_cast<size_t>(round)] = std::chrono::duration<double>(Clock::now() - sent_at_[slot]).count();
    if (done_[slot] == rounds_) return;
    post_receive(slot);
    send_ping(slot);
  }

  std::string missing() const {
    std::string text;
    for (int s = 0; s < kSlots; ++s) {
      if (receives_[s] == MPI_REQUEST_NULL) continue;
      text += fmt::format("{}{} rank {} (round {} of {})", text.empty() ? "no " : "; no ", kName[s], peer_[s],
                          done_[s] + 1, rounds_);
    }
    return text;
  }

  const NeighbourProbeOptions& o_;
  const int rounds_;
  const std::array<int, kSlots> peer_;
  std::vector<unsigned char> ping_;            // what this rank sends both neighbours
  std::vector<unsigned char> in_[kSlots];      // one landing place per receive
  std::array<MPI_Request, kSlots> receives_{};
  std::array<int, kSlots> done_{};             // rounds answered (pings) or completed (echoes)
  std::array<Clock::time_point, kSlots> sent_at_{};  // by echo slot: when its ping left
  std::vector<double> rtt_[kSlots];            // by echo slot: seconds per round
  std::vector<MPI_Request> sends_;
};

// The median of the small rounds that completed; 0 when none did.
double median_small(const std::vector<double>& rtt, int small_rounds) {
  std::vector<double> done;
  for (int r = 0; r < small_rounds; ++r) {
    if (rtt[static_cast<size_t>(r)] > 0) done.push_back(rtt[static_cast<size_t>(r)]);
  }
  if (done.empty()) return 0;
  std::sort(done.begin(), done.end());
  return done[done.size() / 2];
}

void fill_link(NeighbourLink& link, const Prober& prober, Slot echo, const NeighbourProbeOptions& o) {
  const std::vector<double>& rtt = prober.round_trips(echo);
  link.rtt_seconds = median_small(rtt, o.small_round_trips);
  const double large = rtt.back();
  if (large > 0) link.large_gbps = 2.0 * static_cast<double>(o.large_bytes) / large / 1e9;
}

}  // namespace

NeighbourProbe probe_ring_neighbours(const NeighbourProbeOptions& o) {
  int rank = 0, world = 1;
  check_mpi(MPI_Comm_rank(o.comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(o.comm, &world), "MPI_Comm_size");
  NeighbourProbe probe;
  if (world == 1) return probe;
  probe.left.rank = (rank + world - 1) % world;
  probe.right.rank = (rank + 1) % world;

  auto prober = std::make_unique<Prober>(o, probe.left.rank, probe.right.rank);
  try {
    prober->run();
    if (!prober->large_echo_intact(kEchoFromLeft)) {
      probe.error = fmt::format("the 1 MiB echo from left rank {} came back corrupted", probe.left.rank);
    }
    if (!prober->large_echo_intact(kEchoFromRight)) {
      probe.error = fmt::format("the 1 MiB echo from right rank {} came back corrupted", probe.right.rank);
    }
  } catch (const IoError& error) {
    probe.error = error.what();
  }
  fill_link(probe.left, *prober, kEchoFromLeft, o);
  fill_link(probe.right, *prober, kEchoFromRight, o);
  // After a failure some receives and sends are still posted and MPI may yet write into their
  // buffers: those outlive this function (the doctor ends the job after a failure anyway).
  if (!probe.passed()) prober.release();
  return probe;
}

}  // namespace dtbench
