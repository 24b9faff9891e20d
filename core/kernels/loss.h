#pragma once
// Softmax cross-entropy over B rows of K logits, the loss and its gradient in one pass per row.
#include <cstdint>

namespace dtbench::kernels {

struct CrossEntropySums {
  double loss_sum = 0.0;  // Σ over rows of −log softmax(row)[label]
  int64_t correct = 0;    // rows whose first maximal logit is the label
};

// logits (B, K), labels (B) each in [0, K) (checked by the caller). dlogits (B, K), written when
// not null: (softmax − onehot(label)) · grad_scale; it may alias logits. The maximum of each row is
// subtracted before exponentiating, so large logits do not overflow; sums are in double.
CrossEntropySums softmax_crossentropy(float* dlogits, const float* logits, const int32_t* labels,
                                      float grad_scale, int64_t B, int64_t K);

}  // namespace dtbench::kernels
