#pragma once
// Batch-normalisation kernels over NCHW tensors: B samples, C channels, P = H·W values per plane.
// Statistics are per channel over (B, P), summed in short float vector lanes folded into double.
#include <cstdint>

namespace dtbench::kernels {

// Training: normalises with the batch's own statistics, out (B, C, P) = x̂ · weight + bias with
// x̂ = (inp − mean) · inv_std, and returns them: mean (C), var (C) the biased variance,
// inv_std (C) = 1 / sqrt(var + epsilon). inp (B, C, P), weight (C), bias (C). out may alias inp.
void batchnorm_forward_train(float* out, float* mean, float* var, float* inv_std, const float* inp,
                             const float* weight, const float* bias, float epsilon, int64_t B,
                             int64_t C, int64_t P);

// Evaluation: out (B, C, P) = (inp − mean) · inv_std · weight + bias, per channel, with given
// (running) statistics.
// inp (B, C, P), mean (C), inv_std (C), weight (C), bias (C). out may alias inp.
void batchnorm_normalize(float* out, const float* inp, const float* mean, const float* inv_std,
                         const float* weight, const float* bias, int64_t B, int64_t C, int64_t P);

// Gradients of either forward. With x̂ = (inp − mean) · inv_std:
//   dweight (C) = Σ dout · x̂,  dbias (C) = Σ dout.
// dinp (B, C, P), written when not null; it may alias dout. When batch_statistics is true, mean
// and inv_std were computed from this batch and the fused formula applies:
//   dinp = weight · inv_std / N · (N · dout − Σ dout − x̂ · Σ dout · x̂),  N = B · P;
// otherwise they are constants (evaluation) and dinp = weight · inv_std · dout.
// dout (B, C, P), inp (B, C, P), mean (C), inv_std (C), weight (C).
void batchnorm_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                        const float* inp, const float* mean, const float* inv_std,
                        const float* weight, bool batch_statistics, int64_t B, int64_t C,
                        int64_t P);

}  // namespace dtbench::kernels
