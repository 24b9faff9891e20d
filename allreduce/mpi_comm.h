#pragma once
// A communicator this process made (MPI_Comm_dup, _idup, _split) and must free before
// MPI_Finalize: freeing one after it is an error that ends the process ("The MPI_Comm_free()
// function was called after MPI_FINALIZE was invoked", exit 1). Not every owner dies before the
// session that finalises MPI (a bench's buffers, a transport the caller holds), so the order is
// kept by construction instead of by each caller: every MpiComm is entered in a register of this
// process, MpiSession frees whatever the register still holds just before MPI_Finalize
// (free_owned_communicators), and a handle whose communicator was freed that way does nothing when
// it goes, later.
#include <mpi.h>

#include <memory>

namespace dtbench {

class MpiComm {
 public:
  MpiComm() = default;
  // Takes `comm` over (MPI_COMM_NULL: holds nothing).
  explicit MpiComm(MPI_Comm comm);
  ~MpiComm() { reset(); }
  MpiComm(MpiComm&& other) noexcept = default;
  MpiComm& operator=(MpiComm&& other) noexcept;
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;

  // MPI_COMM_NULL when empty, or once the session freed it.
  MPI_Comm get() const;
  // Where an MPI call takes the communicator.
  operator MPI_Comm() const { return get(); }  // NOLINT(google-explicit-constructor)
  // Frees the communicator now (nothing when MPI is already finalised, or it was freed).
  void reset();

  struct Slot;

 private:
  std::shared_ptr<Slot> slot_;
};

// Frees every communicator an MpiComm still holds, the last made first; their handles then hold
// MPI_COMM_NULL. What MpiSession does just before MPI_Finalize (and a test's own main before its
// MPI_Finalize). Returns how many it freed.
int free_owned_communicators();
// Communicators MpiComm handles hold now.
int owned_communicator_count();

}  // namespace dtbench
