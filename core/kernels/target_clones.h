#pragma once
// Kernels compiled twice, for a wider instruction set and for the baseline, with the loader
// picking one at start-up (GCC's target_clones: an ifunc resolver run while the program is being
// relocated). Under ThreadSanitizer that resolver is instrumented and runs before the sanitizer's
// runtime is up, which crashes every binary at load; a TSan build (-DDTBENCH_TSAN=ON) therefore
// compiles the baseline only.
#if defined(__SANITIZE_THREAD__)
#define DTB_TARGET_CLONES(...)
#else
#define DTB_TARGET_CLONES(...) __attribute__((target_clones(__VA_ARGS__)))
#endif
