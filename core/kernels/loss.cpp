#include "core/kernels/loss.h"

#include <cmath>

namespace dtbench::kernels {

CrossEntropySums softmax_crossentropy(float* dlogits, const float* logits, const int32_t* labels,
                                      float grad_scale, int64_t B, int64_t K) {
  CrossEntropySums sums;
  for (int64_t b = 0; b < B; ++b) {
    const float* x = logits + b * K;  // (K)
    const int64_t label = labels[b];
    int64_t argmax = 0;
    for (int64_t k = 1; k < K; ++k) argmax = x[k] > x[argmax] ? k : argmax;
    const float max = x[argmax];
    const double label_logit = double(x[label]) - max;  // read before dlogits may overwrite x

    double exp_sum = 0.0;
    for (int64_t k = 0; k < K; ++k) exp_sum += std::exp(double(x[k]) - max);
    sums.loss_sum += std::log(exp_sum) - label_logit;
    sums.correct += argmax == label ? 1 : 0;
    if (dlogits == nullptr) continue;

    float* dx = dlogits + b * K;  // (K)
    const double scale = grad_scale / exp_sum;
    for (int64_t k = 0; k < K; ++k)
      dx[k] = static_cast<float>(std::exp(double(x[k]) - max) * scale);
    dx[label] -= grad_scale;
  }
  return sums;
}

}  // namespace dtbench::kernels
