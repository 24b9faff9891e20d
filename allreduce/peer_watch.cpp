#include "allreduce/peer_watch.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/ranges.h>

#include "allreduce/mpi_check.h"

namespace dtbench {

namespace {

// Tags at the top of the range every MPI guarantees (MPI_TAG_UB >= 32767); nothing else of the
// run talks on MPI_COMM_WORLD point to point, and the collectives on it cannot match these.
constexpr int kPing = 32701;
constexpr int kPong = 32702;
constexpr int kNotice = 32703;
constexpr int kDone = 32704;

using Clock = std::chrono::steady_clock;

std::vector<char> int_payload(int value) {
  std::vector<char> bytes(sizeof(int));
  std::memcpy(bytes.data(), &value, sizeof(int));
  return bytes;
}

int payload_int(const std::vector<char>& bytes) {
  int value = -1;
  if (bytes.size() == sizeof(int)) std::memcpy(&value, bytes.data(), sizeof(int));
  return value;
}

}  // namespace

PeerWatch::PeerWatch() {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &world_);
}

PeerWatch::~PeerWatch() {
  // Sends to a rank that is gone never complete; freeing lets MPI finish or drop them.
  for (Outgoing& out : sends_) {
    if (out.request != MPI_REQUEST_NULL) MPI_Request_free(&out.request);
  }
}

bool PeerWatch::take(int tag, int& from, std::vector<char>& payload) {
  int flag = 0;
  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_Status status;
  check_mpi(MPI_Improbe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &message, &status), "MPI_Improbe");
  if (flag == 0) return false;
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  payload.assign(static_cast<size_t>(count), '\0');
  check_mpi(MPI_Mrecv(payload.data(), count, MPI_CHAR, &message, MPI_STATUS_IGNORE), "MPI_Mrecv");
  from = status.MPI_SOURCE;
  return true;
}

void PeerWatch::send(int to, int tag, std::vector<char> payload) {
  reap_sends();
  Outgoing& out = sends_.emplace_back();
  out.payload = std::move(payload);
  check_mpi(MPI_Isend(out.payload.data(), static_cast<int>(out.payload.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD,
                      &out.request),
            "MPI_Isend");
}

void PeerWatch::reap_sends() {
  for (Outgoing& out : sends_) {
    int done = 0;
    if (out.request != MPI_REQUEST_NULL) MPI_Test(&out.request, &done, MPI_STATUS_IGNORE);
  }
  while (!sends_.empty() && sends_.front().request == MPI_REQUEST_NULL) sends_.pop_front();
}

void PeerWatch::answer_pings() {
  int from = -1;
  std::vector<char> payload;
  while (take(kPing, from, payload)) send(from, kPong, payload);
}

void PeerWatch::read_notices() {
  int from = -1;
  std::vector<char> payload;
  while (take(kNotice, from, payload)) {
    announced_.insert(from);
    if (!failure_) failure_.emplace(from, std::string(payload.begin(), payload.end()));
  }
}

void PeerWatch::service() {
  const std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;  // another thread is servicing it right now
  answer_pings();
  read_notices();
  if (failure_) throw *failure_;
}

void PeerWatch::set_host_names(std::vector<std::string> hosts) {
  const std::lock_guard lock(mutex_);
  const bool one_host = std::all_of(hosts.begin(), hosts.end(), [&](const std::string& h) { return h == hosts.front(); });
  hosts_ = one_host ? std::vector<std::string>{} : std::move(hosts);
}

std::string PeerWatch::name_of(int rank) const {
  if (rank >= 0 && static_cast<size_t>(rank) < hosts_.size()) {
    return fmt::format("rank {} on {}", rank, hosts_[static_cast<size_t>(rank)]);
  }
  return fmt::format("rank {}", rank);
}

std::vector<int> PeerWatch::roll_call(double grace_seconds) {
  const std::lock_guard lock(mutex_);
  const int id = ++roll_id_;
  std::vector<bool> answered(static_cast<size_t>(world_), false);
  answered[static_cast<size_t>(rank_)] = true;
  for (int r = 0; r < world_; ++r) {
    if (r != rank_) send(r, kPing, int_payload(id));
  }
  const auto deadline = Clock::now() + std::chrono::duration<double>(grace_seconds);
  int from = -1;
  std::vector<char> payload;
  while (std::count(answered.begin(), answered.end(), false) > 0 && Clock::now() < deadline) {
    answer_pings();  // the others may be calling the roll at the same time
    read_notices();  // a rank that announced a failure is alive
    for (int r : announced_) answered[static_cast<size_t>(r)] = true;
    while (take(kPong, from, payload)) {
      if (payload_int(payload) == id) answered[static_cast<size_t>(from)] = true;  // else an old roll call's
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::vector<int> silent;
  for (int r = 0; r < world_; ++r) {
    if (!answered[static_cast<size_t>(r)]) silent.push_back(r);
  }
  silent_ = {silent.begin(), silent.end()};
  return silent;
}

void PeerWatch::announce(const std::string& reason) {
  const std::lock_guard lock(mutex_);
  for (int r = 0; r < world_; ++r) {
    if (r != rank_) send(r, kNotice, std::vector<char>(reason.begin(), reason.end()));
  }
}

void PeerWatch::say_done(int rank) {
  const std::lock_guard lock(mutex_);
  send(rank, kDone, int_payload(rank_));
}

std::vector<int> PeerWatch::await_done(double grace_seconds) {
  const std::lock_guard lock(mutex_);
  std::vector<int> ranks;
  for (int r = 0; r < world_; ++r) {
    if (r != rank_ && silent_.count(r) == 0) ranks.push_back(r);
  }
  const auto deadline = Clock::now() + std::chrono::duration<double>(grace_seconds);
  int from = -1;
  std::vector<char> payload;
  while (!ranks.empty() && Clock::now() < deadline) {
    answer_pings();
    read_notices();
    while (take(kDone, from, payload)) announced_.insert(from);
    std::erase_if(ranks, [&](int r) { return announced_.count(r) > 0; });
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  reap_sends();
  return ranks;
}

void PeerWatch::linger(double seconds) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < deadline) {
    {
      const std::lock_guard lock(mutex_);
      answer_pings();
      reap_sends();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

double roll_call_grace(double timeout_seconds) { return std::clamp(timeout_seconds / 5, 0.5, 2.0); }

std::string roll_call_text(PeerWatch& peers, double grace_seconds) {
  const std::vector<int> silent = peers.roll_call(grace_seconds);
  if (silent.empty()) return fmt::format("every rank answered a roll call within {:.1f} s", grace_seconds);
  std::vector<int> answered;
  for (int r = 0; r < peers.world(); ++r) {
    if (r != peers.rank() && std::find(silent.begin(), silent.end(), r) == silent.end()) answered.push_back(r);
  }
  std::vector<std::string> silent_names;
  for (int r : silent) silent_names.push_back(peers.name_of(r));
  return fmt::format("silent: {} did not answer a roll call within {:.1f} s{}", fmt::join(silent_names, ", "),
                     grace_seconds,
                     answered.empty() ? std::string() : fmt::format(" (rank{} {} did)", answered.size() > 1 ? "s" : "",
                                                                    fmt::join(answered, ", ")));
}

}  // namespace dtbench
