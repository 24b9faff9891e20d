# C++ and gRPC stubs from a .proto of the tree, generated at build time into the binary folder's
# generated/ under the proto's own path (paramserver/ps.proto -> generated/paramserver/ps.pb.h), so
# they are included like every other header ("paramserver/ps.pb.h"), and compiled as a library of
# their own without warnings (generated code). Call after protobuf, gRPC and grpc_cpp_plugin were
# found (paramserver/CMakeLists.txt finds them).
#   dtbench_grpc_proto(TARGET proto_file [LINK library...])
function(dtbench_grpc_proto target proto)
  cmake_parse_arguments(ARG "" "" "LINK" ${ARGN})
  get_filename_component(name ${proto} NAME_WE)
  file(RELATIVE_PATH folder ${DTBENCH_INCLUDE_ROOT} ${CMAKE_CURRENT_SOURCE_DIR})
  set(out ${CMAKE_CURRENT_BINARY_DIR}/generated)
  set(files ${out}/${folder}/${name}.pb.cc ${out}/${folder}/${name}.pb.h
            ${out}/${folder}/${name}.grpc.pb.cc ${out}/${folder}/${name}.grpc.pb.h)
  add_custom_command(
    OUTPUT ${files}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out}
    COMMAND ${Protobuf_PROTOC_EXECUTABLE} -I ${DTBENCH_INCLUDE_ROOT} --cpp_out=${out} --grpc_out=${out}
            --plugin=protoc-gen-grpc=${GRPC_CPP_PLUGIN} ${CMAKE_CURRENT_SOURCE_DIR}/${proto}
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${proto}
    COMMENT "protoc: ${folder}/${proto} -> C++ and gRPC stubs"
    VERBATIM)
  add_library(${target} STATIC ${files})
  target_include_directories(${target} SYSTEM PUBLIC ${out})
  target_link_libraries(${target} PUBLIC ${ARG_LINK})
  target_compile_options(${target} PRIVATE -w)  # generated code
endfunction()
