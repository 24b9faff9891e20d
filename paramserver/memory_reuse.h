#pragma once
// Keeps the memory a parameter server or worker frees for its next use. Every push and pull of a
// large shard passes through gRPC's receive buffers (megabytes each), and glibc's defaults hand
// such memory back to the kernel as soon as it is freed (munmap, or madvise when a thread's arena
// shrinks): the next buffer is then mapped afresh and zeroed by the kernel page by page. Measured
// with `bench ps` (2 workers, 64 MiB, 10 rounds): a quarter of the process's system time went to
// those page faults and the madvise calls.
namespace dtbench {

// Raises glibc's mmap threshold to its largest (32 MiB) and stops arenas from being trimmed, for
// the whole process, once. A process that ran a large shard keeps its peak heap until it exits.
void reuse_freed_memory();

}  // namespace dtbench
