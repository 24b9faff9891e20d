#pragma once
// One single-threaded sgemm per thread, all at once: the way the convolutions run their sample
// groups (conv_gemm.cpp), and so the second arrangement bench ops' compute ceiling probes. Whether
// it beats one sgemm on every thread depends on the OpenBLAS build: concurrent calls into the
// pthreads build contend with each other (OpenMathLib/OpenBLAS#3187, #4503).
namespace dtbench::kernels {

// c (threads, n, n), written: c[t] = a (n, n) · b (n, n) on thread t, row-major. OpenBLAS is held
// at one thread meanwhile and its setting restored afterwards.
void sgemm_per_thread(float* c, const float* a, const float* b, int n, int threads);

}  // namespace dtbench::kernels
