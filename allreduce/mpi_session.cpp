#include "allreduce/mpi_session.h"

#include <cstdlib>

#include <fmt/format.h>

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
    check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &world_);
  }
  ~MpiChannel() override { MPI_Comm_free(&comm_); }

  int rank() const override { return rank_; }
  int world() const override { return world_; }

  std::string broadcast(const std::string& text) override {
    int64_t size = static_cast<int64_t>(text.size());
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibcast(&size, 1, MPI_INT64_T, 0, comm_, &request), "MPI_Ibcast");
    finish(request, "a broadcast from rank 0");
    std::string result = rank_ == 0 ? text : std::string(static_cast<size_t>(size), '\0');
    check_mpi(MPI_Ibcast(result.data(), static_cast<int>(size), MPI_CHAR, 0, comm_, &request), "MPI_Ibcast");
    finish(request, "a broadcast from rank 0");
    return result;
  }

  std::vector<std::string> gather(const std::string& text) override {
    int size = static_cast<int>(text.size());
    std::vector<int> sizes(static_cast<size_t>(world_));
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Igather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, comm_, &request), "MPI_Igather");
    finish(request, "gathering every rank's report at rank 0 (an epoch's end)");
    std::vector<int> offsets(static_cast<size_t>(world_), 0);
    for (int r = 1; r < world_; ++r) offsets[static_cast<size_t>(r)] = offsets[static_cast<size_t>(r - 1)] + sizes[static_cast<size_t>(r - 1)];
    std::string all(rank_ == 0 ? static_cast<size_t>(offsets.back() + sizes.back()) : 0, '\0');
    check_mpi(MPI_Igatherv(text.data(), size, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0, comm_,
                           &request),
              "MPI_Igatherv");
    finish(request, "gathering every rank's report at rank 0 (an epoch's end)");
    std::vector<std::string> result;
    if (rank_ != 0) return result;
    for (int r = 0; r < world_; ++r) {
      result.push_back(all.substr(static_cast<size_t>(offsets[static_cast<size_t>(r)]),
                                  static_cast<size_t>(sizes[static_cast<size_t>(r)])));
    }
    return result;
  }

 private:
  void finish(MPI_Request& request, const char* what) {
    WaitPolicy policy = policy_;
    policy.describe = [this, what] { return fmt::format("control channel, rank {}: {}", rank_, what); };
    wait_all({&request, 1}, policy);
  }

  WaitPolicy policy_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int world_ = 1;
};

}  // namespace

MpiSession::MpiSession() {
  int provided = MPI_THREAD_SINGLE;
  check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  thread_multiple_ = provided >= MPI_THREAD_MULTIPLE;
  // Errors come back as codes (and become exceptions with context) instead of aborting in MPI.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &world_);
  MPI_Comm local = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
            "MPI_Comm_split_type");
  MPI_Comm_rank(local, &local_rank_);
  MPI_Comm_size(local, &local_world_);
  MPI_Comm_free(&local);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

std::unique_ptr<ControlChannel> make_mpi_channel(WaitPolicy policy) {
  return std::make_unique<MpiChannel>(std::move(policy));
}

std::unique_ptr<ControlChannel> MpiSession::control_channel(WaitPolicy policy) const {
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
