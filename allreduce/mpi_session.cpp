#include "allreduce/mpi_session.h"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "allreduce/mpi_check.h"
#include "allreduce/request_wait.h"

namespace dtbench {

namespace {

// Every collective is non-blocking and waited on with the run's deadline: a rank that stalls at
// an epoch's end (when rank 0 gathers the reports) fails the others in bounded time, each with
// its own report saying so, rather than leaving rank 0 blocked until another rank aborts the job.
class MpiChannel : public ControlChannel {
 public:
  explicit MpiChannel(WaitPolicy policy) : policy_(std::move(policy)) {
    comm_ = duplicate_communicator(MPI_COMM_WORLD, policy_, "the control channel's communicator");
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &world_);
  }

  int rank() const override { return rank_; }
  int world() const override { return world_; }

  std::string broadcast(const std::string& text) override {
    auto b = std::make_shared<Buffers>();
    b->size = static_cast<int64_t>(text.size());
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibcast(&b->size, 1, MPI_INT64_T, 0, comm_, &request), "MPI_Ibcast");
    finish(request, "a broadcast from rank 0", b);
    b->all = rank_ == 0 ? text : std::string(static_cast<size_t>(b->size), '\0');
    check_mpi(MPI_Ibcast(b->all.data(), static_cast<int>(b->size), MPI_CHAR, 0, comm_, &request), "MPI_Ibcast");
    finish(request, "a broadcast from rank 0", b);
    return b->all;
  }

  std::vector<std::string> gather(const std::string& text) override {
    auto b = std::make_shared<Buffers>();
    b->text = text;
    b->sizes.assign(static_cast<size_t>(world_), 0);
    b->length = static_cast<int>(text.size());
    const int size = b->length;
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Igather(&b->length, 1, MPI_INT, b->sizes.data(), 1, MPI_INT, 0, comm_, &request), "MPI_Igather");
    finish(request, "gathering every rank's report at rank 0 (an epoch's end)", b);
    std::vector<int>& sizes = b->sizes;
    std::vector<int>& offsets = b->offsets;
    offsets.assign(static_cast<size_t>(world_), 0);
    for (int r = 1; r < world_; ++r) offsets[static_cast<size_t>(r)] = offsets[static_cast<size_t>(r - 1)] + sizes[static_cast<size_t>(r - 1)];
    b->all.assign(rank_ == 0 ? static_cast<size_t>(offsets.back() + sizes.back()) : 0, '\0');
    check_mpi(MPI_Igatherv(b->text.data(), size, MPI_CHAR, b->all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0,
                           comm_, &request),
              "MPI_Igatherv");
    finish(request, "gathering every rank's report at rank 0 (an epoch's end)", b);
    std::vector<std::string> result;
    if (rank_ != 0) return result;
    for (int r = 0; r < world_; ++r) {
      result.push_back(b->all.substr(static_cast<size_t>(offsets[static_cast<size_t>(r)]),
                                     static_cast<size_t>(sizes[static_cast<size_t>(r)])));
    }
    return result;
  }

  void barrier() override {
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier");
    finish(request, "a barrier of every rank (the first epoch's start)", std::make_shared<Buffers>());
  }

 private:
  // What a collective reads and writes. A collective that timed out cannot be cancelled: a late
  // rank may still deliver into these, so they are then kept for the life of the process.
  struct Buffers {
    int64_t size = 0;
    int length = 0;
    std::string text;
    std::vector<int> sizes, offsets;
    std::string all;
  };

  void finish(MPI_Request& request, const char* what, const std::shared_ptr<Buffers>& buffers) {
    WaitPolicy policy = policy_;
    policy.describe = [this, what] { return fmt::format("control channel, rank {}: {}", rank_, what); };
    try {
      wait_all({&request, 1}, policy);
    } catch (...) {
      static std::vector<std::shared_ptr<Buffers>> abandoned;  // only on the way to ending the job
      static std::mutex mutex;
      const std::lock_guard lock(mutex);
      abandoned.push_back(buffers);
      throw;
    }
  }

  WaitPolicy policy_;
  MpiComm comm_;
  int rank_ = 0;
  int world_ = 1;
};

// Ends this process when a blocking start-up or shut-down call has not returned by the deadline:
// such a call cannot be cancelled, and mpirun ends the job once one of its ranks exits non-zero.
class ExitTimer {
 public:
  ExitTimer(double seconds, std::string what) : what_(std::move(what)) {
    thread_ = std::thread([this, seconds] {
      std::unique_lock lock(mutex_);
      if (done_changed_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return done_; })) return;
      spdlog::error("rank {}: {} did not return within {:.1f} s: a rank of the job did not arrive (MPI cannot say "
                    "which before it has started); ending this rank",
                    world_rank_from_environment(), what_, seconds);
      std::_Exit(1);
    });
  }
  ~ExitTimer() {
    {
      const std::lock_guard lock(mutex_);
      done_ = true;
    }
    done_changed_.notify_all();
    thread_.join();
  }

 private:
  // Before MPI_Init returns MPI cannot say the rank; Open MPI's launcher can.
  static std::string world_rank_from_environment() {
    const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
    return rank != nullptr ? rank : "?";
  }

  std::string what_;
  std::mutex mutex_;
  std::condition_variable done_changed_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace

MpiComm duplicate_communicator(MPI_Comm comm, const WaitPolicy& policy, const char* what) {
  MPI_Comm copy = MPI_COMM_NULL;
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Comm_idup(comm, &copy, &request), "MPI_Comm_idup");
  WaitPolicy wait = policy;
  wait.describe = [what] { return fmt::format("duplicating a communicator for {}", what); };
  wait_all({&request, 1}, wait);
  return MpiComm(copy);
}

MpiSession::MpiSession(const WaitPolicy& start_up) : timeout_seconds_(start_up.timeout_seconds) {
  int provided = MPI_THREAD_SINGLE;
  {
    const ExitTimer timer(timeout_seconds_, "MPI_Init");
    check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  }
  thread_multiple_ = provided >= MPI_THREAD_MULTIPLE;
  // Errors come back as codes (and become exceptions with context) instead of aborting in MPI.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &world_);
  peers_ = std::make_unique<PeerWatch>();
  // The ranks on this host, from every rank's host name (MPI_Comm_split_type would be a blocking
  // collective without a deadline).
  constexpr int kName = MPI_MAX_PROCESSOR_NAME;
  std::vector<char> names(static_cast<size_t>(kName) * static_cast<size_t>(world_), '\0');
  std::vector<char> own(kName, '\0');
  int length = 0;
  MPI_Get_processor_name(own.data(), &length);
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallgather(own.data(), kName, MPI_CHAR, names.data(), kName, MPI_CHAR, MPI_COMM_WORLD, &request),
            "MPI_Iallgather");
  WaitPolicy wait = start_up;
  wait.peers = peers_.get();
  wait.describe = [this] { return fmt::format("rank {} at start-up: exchanging host names", rank_); };
  wait_all({&request, 1}, wait);
  local_rank_ = 0;
  local_world_ = 0;
  std::vector<std::string> hosts;
  for (int r = 0; r < world_; ++r) {
    hosts.emplace_back(names.data() + static_cast<size_t>(r) * kName);
    if (hosts.back() != std::string_view(own.data())) continue;
    ++local_world_;
    if (r < rank_) ++local_rank_;
  }
  peers_->set_host_names(std::move(hosts));
}

MpiSession::~MpiSession() {
  peers_.reset();
  free_owned_communicators();  // whoever still holds one: freeing it after MPI_Finalize ends the process
  const ExitTimer timer(timeout_seconds_, "MPI_Finalize");
  MPI_Finalize();
}

std::unique_ptr<ControlChannel> make_mpi_channel(WaitPolicy policy) {
  return std::make_unique<MpiChannel>(std::move(policy));
}

std::unique_ptr<ControlChannel> MpiSession::control_channel(WaitPolicy policy) const {
  policy.peers = peers_.get();
  return make_mpi_channel(std::move(policy));
}

void MpiSession::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

bool MpiSession::launched_by_mpi() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"}) {
    if (std::getenv(variable) != nullptr) return true;
  }
  return false;
}

}  // namespace dtbench
