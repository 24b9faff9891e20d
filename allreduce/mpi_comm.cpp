#include "allreduce/mpi_comm.h"

#include <algorithm>
#include <mutex>
#include <vector>

namespace dtbench {

struct MpiComm::Slot {
  MPI_Comm comm = MPI_COMM_NULL;
};

namespace {

// The register: every handle's slot, in the order they were made. A slot goes with its handle,
// so the register keeps weak references and forgets expired ones as it goes.
struct Register {
  std::mutex mutex;
  std::vector<std::weak_ptr<MpiComm::Slot>> slots;
};

Register& owned() {
  static Register* instance = new Register;  // never destroyed: handles may go at static destruction
  return *instance;
}

bool mpi_finalized() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
}

// Frees the slot's communicator; the caller holds the register's lock.
void free_slot(MpiComm::Slot& slot) {
  if (slot.comm == MPI_COMM_NULL) return;
  if (!mpi_finalized()) MPI_Comm_free(&slot.comm);
  slot.comm = MPI_COMM_NULL;
}

}  // namespace

MpiComm::MpiComm(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return;
  slot_ = std::make_shared<Slot>();
  slot_->comm = comm;
  Register& r = owned();
  const std::lock_guard lock(r.mutex);
  std::erase_if(r.slots, [](const std::weak_ptr<Slot>& s) { return s.expired(); });
  r.slots.push_back(slot_);
}

MpiComm& MpiComm::operator=(MpiComm&& other) noexcept {
  if (this != &other) {
    reset();
    slot_ = std::move(other.slot_);
  }
  return *this;
}

MPI_Comm MpiComm::get() const { return slot_ ? slot_->comm : MPI_COMM_NULL; }

void MpiComm::reset() {
  if (!slot_) return;
  {
    const std::lock_guard lock(owned().mutex);
    free_slot(*slot_);
  }
  slot_.reset();
}

int free_owned_communicators() {
  Register& r = owned();
  const std::lock_guard lock(r.mutex);
  int freed = 0;
  for (auto it = r.slots.rbegin(); it != r.slots.rend(); ++it) {
    const std::shared_ptr<MpiComm::Slot> slot = it->lock();
    if (!slot || slot->comm == MPI_COMM_NULL) continue;
    free_slot(*slot);
    ++freed;
  }
  r.slots.clear();
  return freed;
}

int owned_communicator_count() {
  Register& r = owned();
  const std::lock_guard lock(r.mutex);
  return static_cast<int>(std::count_if(r.slots.begin(), r.slots.end(), [](const std::weak_ptr<MpiComm::Slot>& s) {
    const auto slot = s.lock();
    return slot && slot->comm != MPI_COMM_NULL;
  }));
}

}  // namespace dtbench
