# Unity builds: a library's source files compiled in batches of sixteen as one file each, so the
# templates they all use (nlohmann/json, fmt, CLI11, gRPC, protobuf) are parsed, instantiated and
# optimised once per batch rather than once per file. Most of dtbench's compile time was there: a
# 38-line command file took 15 s, nearly all of it in those headers (precompiling them saved
# nothing measurable: the time is in instantiating and optimising, not in parsing). The rooms
# above core, and core's own files but its kernels, which keep one object per file, with their
# per-file flags and clones. Batches of sixteen rather than eight: the dtbench target from a clean
# tree took 734 s of compiler CPU with eight (2-core AMD EPYC) and 527 s with sixteen together with
# the paramserver's gRPC glue at -O1 (cmake/orchestration.cmake) — each batch parses those headers
# once, and on two cores there are always enough batches to keep both busy.
# DTBENCH_UNITY=OFF compiles file by file (the sources include what they use either way).
option(DTBENCH_UNITY "Compile the libraries in batches (unity build; core's kernels apart)" ON)

set(DTBENCH_UNITY_BATCH 16 CACHE STRING "Source files per unity batch")
function(dtbench_unity target)
  if(DTBENCH_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${DTBENCH_UNITY_BATCH})
  endif()
endfunction()

