#include "allreduce/ring_chunk.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "allreduce/mpi_check.h"

namespace dtbench {

namespace {

// Open MPI's ob1 match header is 14–24 bytes depending on the build; the eager limit counts it.
constexpr int64_t kMatchHeaderRoom = 64;

// The value of an integer control variable of the MPI tool interface, or -1 when there is none.
int64_t read_integer_cvar(const char* name) {
  int provided = 0;
  // The training thread asks while others may be inside MPI: the tool interface as thread-safe as
  // the library allows.
  if (MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) return -1;
  int64_t value = -1;
  int index = -1;
  MPI_T_cvar_handle handle = MPI_T_CVAR_HANDLE_NULL;
  int count = 0;
  if (MPI_T_cvar_get_index(name, &index) == MPI_SUCCESS &&
      MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) == MPI_SUCCESS) {
    char found_name[256], description[1024];
    int name_length = sizeof(found_name), description_length = sizeof(description);
    int verbosity = 0, binding = 0, scope = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_T_enum enumtype = MPI_T_ENUM_NULL;
    alignas(8) unsigned char raw[16] = {};
    if (count == 1 &&
        MPI_T_cvar_get_info(index, found_name, &name_length, &verbosity, &type, &enumtype, description,
                            &description_length, &binding, &scope) == MPI_SUCCESS &&
        MPI_T_cvar_read(handle, raw) == MPI_SUCCESS) {
      if (type == MPI_UNSIGNED_LONG || type == MPI_UNSIGNED_LONG_LONG || type == MPI_COUNT ||
          type == MPI_LONG || type == MPI_LONG_LONG) {
        int64_t v = 0;
        std::memcpy(&v, raw, sizeof(v));
        value = v;
      } else if (type == MPI_INT || type == MPI_UNSIGNED) {
        int v = 0;
        std::memcpy(&v, raw, sizeof(v));
        value = v;
      }
    }
    MPI_T_cvar_handle_free(&handle);
  }
  MPI_T_finalize();
  return value;
}

}  // namespace

int64_t tcp_eager_limit() { return std::max<int64_t>(read_integer_cvar("btl_tcp_eager_limit"), 0); }

int64_t eager_chunk_bytes(int64_t eager_limit) {
  return std::max<int64_t>((eager_limit - kMatchHeaderRoom) / 4 * 4, 4);
}

RingChunk resolve_ring_chunk(int64_t requested, bool shared_memory, MPI_Comm comm, const WaitPolicy& wait) {
  int world = 1;
  check_mpi(MPI_Comm_size(comm, &world), "MPI_Comm_size");
  RingChunk chunk;
  const bool one_neighbour = world == 2;
  const int64_t eager_limit = requested > 0 || shared_memory || !one_neighbour ? 0 : tcp_eager_limit();
  if (requested > 0) {
    chunk = {requested, "comm.chunk_kb"};
  } else if (shared_memory) {
    chunk = {kSharedMemoryChunkBytes, "1 MiB: the slot of the shared-memory ring"};
  } else if (!one_neighbour) {
    chunk = {kLargeMessageChunkBytes,
             "1 MiB: each rank's left and right neighbours differ, so each connection carries one direction"};
  } else if (eager_limit > kMatchHeaderRoom) {
    chunk = {eager_chunk_bytes(eager_limit),
             fmt::format("the largest eager message of Open MPI's TCP BTL (btl_tcp_eager_limit {} B, less {} B for "
                         "the match header): no rendezvous acknowledgement queues behind the data",
                         eager_limit, kMatchHeaderRoom)};
  } else {
    chunk = {kLargeMessageChunkBytes, "1 MiB: the MPI library names no TCP eager limit"};
  }
  int64_t smallest = chunk.bytes;
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(&chunk.bytes, &smallest, 1, MPI_INT64_T, MPI_MIN, comm, &request), "MPI_Iallreduce");
  wait_all({&request, 1}, wait);
  if (smallest != chunk.bytes) {
    chunk = {smallest, fmt::format("{} B, the smallest any rank picked (this rank's: {} B, {})", smallest,
                                   chunk.bytes, chunk.source)};
  }
  return chunk;
}

}  // namespace dtbench
