# The code that orchestrates rather than computes (the command line, reports, sweeps, predict,
# bench's harness: launch/ and the tests) is compiled at -O1 in a Release build: its templates
# (nlohmann/json, fmt, CLI11) took a third of the build's time to optimise at -O3, for code whose
# speed no run measures. Every kernel, transport and server stays at the build type's level.
function(dtbench_orchestration_flags)
  add_compile_options($<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CONFIG:Release>>:-O1>)
endfunction()

# The files of an orchestrating directory that compute after all (a server's update pass): back at
# the build type's level.
function(dtbench_keep_build_level)
  set_source_files_properties(${ARGN} DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
                              PROPERTIES COMPILE_OPTIONS $<$<CONFIG:Release>:-O3>)
endfunction()
