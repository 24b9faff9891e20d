// NcclBenchBuffer over cudaMalloc'd memory: device memory proper, not managed, so that NCCL's
// figures are its own and not those of page migration.
#include <fmt/format.h>

#include "allreduce/nccl/nccl_communicator.h"
#include "allreduce/nccl/register.h"
#include "core/util/error.h"

namespace dtbench {

namespace {

class DeviceBuffer final : public NcclBenchBuffer {
 public:
  DeviceBuffer(MPI_Comm comm, int64_t capacity, const NcclTransportOptions& options)
      : nccl_(comm, options), capacity_(capacity) {
    for (float** buffer : {&input_, &result_}) {
      check_cuda_call(cudaMalloc(reinterpret_cast<void**>(buffer), static_cast<size_t>(capacity) * sizeof(float)),
                      "cudaMalloc (bench buffer)");
    }
  }
  ~DeviceBuffer() override {
    cudaFree(input_);
    cudaFree(result_);
  }

  void fill_zeros(int64_t count) override {
    check_cuda_call(cudaMemset(input_, 0, bytes(count)), "cudaMemset");
    check_cuda_call(cudaMemset(result_, 0, bytes(count)), "cudaMemset");
  }
  void poison_result(int64_t count) override {
    check_cuda_call(cudaMemset(result_, 0xFF, bytes(count)), "cudaMemset");  // every float a NaN
  }
  void upload(std::span<const float> values) override {
    check_cuda_call(cudaMemcpy(input_, values.data(), bytes(std::ssize(values)), cudaMemcpyHostToDevice),
                    "cudaMemcpy (to the device)");
  }
  void download(std::span<float> values) override {
    check_cuda_call(cudaMemcpy(values.data(), result_, bytes(std::ssize(values)), cudaMemcpyDeviceToHost),
                    "cudaMemcpy (to the host)");
  }
  void sum(int64_t count) override {
    nccl_.all_reduce(input_, result_, static_cast<size_t>(count), ncclSum,
                     fmt::format("ncclAllReduce of {} floats", count));
  }
  int nccl_version() const override { return NcclCommunicator::version(); }

 private:
  size_t bytes(int64_t count) const {
    if (count > capacity_) throw LogicError(fmt::format("{} floats asked of a bench buffer of {}", count, capacity_));
    return static_cast<size_t>(count) * sizeof(float);
  }

  NcclCommunicator nccl_;
  int64_t capacity_;
  float* input_ = nullptr;
  float* result_ = nullptr;
};

}  // namespace

std::unique_ptr<NcclBenchBuffer> open_nccl_bench_buffer(MPI_Comm comm, int64_t capacity,
                                                        const NcclTransportOptions& options) {
  return std::make_unique<DeviceBuffer>(comm, capacity, options);
}

}  // namespace dtbench
