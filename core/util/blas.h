#pragma once
// OpenBLAS picks its kernels ("core") once, when the library loads, from the CPU it recognises or
// from OPENBLAS_CORETYPE. Both can leave it on a weaker kernel than the CPU supports: Debian's
// 0.3.21 does not know every AVX-512 CPU, and machine images sometimes export
// OPENBLAS_CORETYPE=Haswell (half the sgemm speed of the AVX-512 kernels on such a CPU). So the
// program re-executes itself, before anything else happens, with OPENBLAS_CORETYPE raised to the
// best core this CPU supports. DTBENCH_BLAS_CORE=<name> forces a core instead (for experiments).
#include <string>

namespace dtbench::blas {

// The core OpenBLAS should use on this CPU ("Cooperlake", "SkylakeX", "Haswell"), or empty when
// we know nothing better than OpenBLAS's own choice.
std::string preferred_core();

// Re-executes this process (same pid, same arguments) with OPENBLAS_CORETYPE set when OpenBLAS
// runs a weaker core than preferred_core(), or another core than DTBENCH_BLAS_CORE names. Call
// first thing in main, before MPI or threads start. Returns when nothing needs to change, or when
// re-executing failed (then the slower core is kept and a warning logged).
void select_core(char** argv);

// The core in use now, as OpenBLAS names it ("Cooperlake").
std::string core_name();
// How this process's core was chosen, for reports: "chosen by OpenBLAS", "set by OPENBLAS_CORETYPE",
// "raised from Haswell (inherited OPENBLAS_CORETYPE) to Cooperlake", "forced by DTBENCH_BLAS_CORE".
// A process started by a raised one decides for itself: the raise is not inherited.
std::string core_selection();
// The library's build configuration ("OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY ...").
std::string config();

void set_threads(int threads);
int threads();

}  // namespace dtbench::blas
