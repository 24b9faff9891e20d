#include "allreduce/mpi_session.h"

#include <cstdlib>

#include "allreduce/mpi_check.h"

namespace dtbench {

namespace {

class MpiChannel : public ControlChannel {
 public:
  MpiChannel() {
    check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &world_);
  }
  ~MpiChannel() override { MPI_Comm_free(&comm_); }

  int rank() const override { return rank_; }
  int world() const override { return world_; }

  std::string broadcast(const std::string& text) override {
    int64_t size = static_cast<int64_t>(text.size());
    check_mpi(MPI_Bcast(&size, 1, MPI_INT64_T, 0, comm_), "MPI_Bcast");
    std::string result = rank_ == 0 ? text : std::string(static_cast<size_t>(size), '\0');
    check_mpi(MPI_Bcast(result.data(), static_cast<int>(size), MPI_CHAR, 0, comm_), "MPI_Bcast");
    return result;
  }

  std::vector<std::string> gather(const std::string& text) override {
    int size = static_cast<int>(text.size());
    std::vector<int> sizes(static_cast<size_t>(world_));
    check_mpi(MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, comm_), "MPI_Gather");
    std::vector<int> offsets(static_cast<size_t>(world_), 0);
    for (int r = 1; r < world_; ++r) offsets[static_cast<size_t>(r)] = offsets[static_cast<size_t>(r - 1)] + sizes[static_cast<size_t>(r - 1)];
    std::string all(rank_ == 0 ? static_cast<size_t>(offsets.back() + sizes.back()) : 0, '\0');
    check_mpi(MPI_Gatherv(text.data(), size, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0, comm_),
              "MPI_Gatherv");
    std::vector<std::string> result;
    if (rank_ != 0) return result;
    for (int r = 0; r < world_; ++r) {
      result.push_back(all.substr(static_cast<size_t>(offsets[static_cast<size_t>(r)]),
                                  static_cast<size_t>(sizes[static_cast<size_t>(r)])));
    }
    return result;
  }


 private:
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

std::unique_ptr<ControlChannel> MpiSession::control_channel() const { return std::make_unique<MpiChannel>(); }

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
