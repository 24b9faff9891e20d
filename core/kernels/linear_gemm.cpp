#include "core/kernels/linear_gemm.h"

#include <algorithm>

#include <cblas.h>

namespace dtbench {

namespace {

// Products of fewer multiply-adds than this run on one OpenBLAS thread: splitting them costs more
// in waking and joining threads than it saves (LeNet-5's 400 -> 120 layer, batch 64, 3 M MACs, at
// 2 threads: forward 0.25 ms on two threads, 0.11 ms on one; best of 200 steps), and each split
// is one more point where a thread that the OS has preempted holds up the other.
constexpr int64_t kMinThreadedMacs = int64_t{1} << 23;

// Holds OpenBLAS at one thread for the products of a layer this small; restores it afterwards.
class OneThreadWhenSmall {
 public:
  explicit OneThreadWhenSmall(int64_t macs)
      : saved_(macs < kMinThreadedMacs ? openblas_get_num_threads() : 1) {
    if (saved_ > 1) openblas_set_num_threads(1);
  }
  ~OneThreadWhenSmall() {
    if (saved_ > 1) openblas_set_num_threads(saved_);
  }
  OneThreadWhenSmall(const OneThreadWhenSmall&) = delete;
  OneThreadWhenSmall& operator=(const OneThreadWhenSmall&) = delete;

 private:
  int saved_;
};

}  // namespace

void linear_forward(float* out, const float* inp, const float* weight, const float* bias,
                    int64_t B, int64_t C, int64_t OC) {
  const OneThreadWhenSmall threads(B * C * OC);
  // out (B, OC) = inp (B, C) · weight^T (C, OC)
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(B), static_cast<int>(OC),
              static_cast<int>(C), 1.0f, inp, static_cast<int>(C), weight, static_cast<int>(C),
              0.0f, out, static_cast<int>(OC));
  if (bias == nullptr) return;
  for (int64_t b = 0; b < B; ++b) {
    float* row = out + b * OC;  // (OC)
    for (int64_t o = 0; o < OC; ++o) row[o] += bias[o];
  }
}

void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                     const float* inp, const float* weight, int64_t B, int64_t C, int64_t OC) {
  const OneThreadWhenSmall threads(B * C * OC);  // each of the two products
  // dweight (OC, C) = dout^T (OC, B) · inp (B, C)
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(OC), static_cast<int>(C),
              static_cast<int>(B), 1.0f, dout, static_cast<int>(OC), inp, static_cast<int>(C),
              0.0f, dweight, static_cast<int>(C));
  if (dinp != nullptr) {
    // dinp (B, C) = dout (B, OC) · weight (OC, C)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(B),
                static_cast<int>(C), static_cast<int>(OC), 1.0f, dout, static_cast<int>(OC), weight,
                static_cast<int>(C), 0.0f, dinp, static_cast<int>(C));
  }
  if (dbias != nullptr) {
    // dbias (OC) = the column sums of dout
    std::fill_n(dbias, OC, 0.0f);
    for (int64_t b = 0; b < B; ++b) {
      const float* row = dout + b * OC;  // (OC)
      for (int64_t o = 0; o < OC; ++o) dbias[o] += row[o];
    }
  }
}

}  // namespace dtbench
