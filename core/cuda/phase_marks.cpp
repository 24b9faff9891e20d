#include "core/cuda/phase_marks.h"

#include <vector>

namespace dtbench::cuda {

namespace {

class EventMarks final : public PhaseMarks {
 public:
  EventMarks(CudaContext& context, int count) : context_(context), events_(static_cast<size_t>(count)) {
    for (cudaEvent_t& event : events_) DTB_CUDA(cudaEventCreate(&event));  // with timing
  }
  ~EventMarks() override {
    for (cudaEvent_t event : events_) cudaEventDestroy(event);
  }
  EventMarks(const EventMarks&) = delete;
  EventMarks& operator=(const EventMarks&) = delete;

  void record(int index) override { DTB_CUDA(cudaEventRecord(events_.at(static_cast<size_t>(index)), context_.stream())); }

  std::vector<double> seconds_from_first() override {
    DTB_CUDA(cudaEventSynchronize(events_.back()));
    std::vector<double> seconds(events_.size(), 0.0);
    for (size_t i = 1; i < events_.size(); ++i) {
      float milliseconds = 0.0f;  // resolution about half a microsecond
      DTB_CUDA(cudaEventElapsedTime(&milliseconds, events_.front(), events_[i]));
      seconds[i] = 1e-3 * milliseconds;
    }
    return seconds;
  }

 private:
  CudaContext& context_;
  std::vector<cudaEvent_t> events_;
};

}  // namespace

std::unique_ptr<PhaseMarks> make_phase_marks(CudaContext& context, int count) {
  return std::make_unique<EventMarks>(context, count);
}

}  // namespace dtbench::cuda
