# The CUDA device backend (core/cuda/) is built when the CUDA toolkit with cuBLAS, cuDNN and NCCL is
# found: DTBENCH_CUDA=AUTO (the default) builds it when they are there and the CPU build otherwise,
# ON makes their absence an error, OFF never looks. Sets:
#   DTBENCH_CUDA_TOOLKIT_FOUND  the toolkit and its libraries were found (whatever was built)
#   DTBENCH_CUDA_ENABLED        the backend is built; the CUDA language is enabled
#   targets dtbench_cudnn, dtbench_nccl (imported) when found
set(DTBENCH_CUDA AUTO CACHE STRING "CUDA device backend: AUTO (when the toolkit is found), ON (required) or OFF")
set_property(CACHE DTBENCH_CUDA PROPERTY STRINGS AUTO ON OFF)
if(NOT DTBENCH_CUDA MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "DTBENCH_CUDA is '${DTBENCH_CUDA}'; expected AUTO, ON or OFF")
endif()

set(DTBENCH_CUDA_TOOLKIT_FOUND OFF)
set(DTBENCH_CUDA_ENABLED OFF)
if(DTBENCH_CUDA STREQUAL "OFF")
  message(STATUS "CUDA backend: not built (DTBENCH_CUDA=OFF)")
else()
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    # cuDNN and NCCL are not part of the toolkit's CMake package; they are installed beside it
    # (or in the system's paths).
    set(cuda_search_hints ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_TARGET_DIR}/lib64 ${CUDAToolkit_TARGET_DIR}/lib)
    find_path(DTBENCH_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    find_library(DTBENCH_CUDNN_LIBRARY cudnn HINTS ${cuda_search_hints})
    find_path(DTBENCH_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    find_library(DTBENCH_NCCL_LIBRARY nccl HINTS ${cuda_search_hints})
    if(DTBENCH_CUDNN_INCLUDE_DIR AND DTBENCH_CUDNN_LIBRARY AND DTBENCH_NCCL_INCLUDE_DIR AND DTBENCH_NCCL_LIBRARY
       AND CUDAToolkit_NVCC_EXECUTABLE AND TARGET CUDA::cublas)
      set(DTBENCH_CUDA_TOOLKIT_FOUND ON)
    endif()
  endif()
  if(NOT DTBENCH_CUDA_TOOLKIT_FOUND)
    set(cuda_missing "CUDA toolkit ${CUDAToolkit_VERSION} (nvcc '${CUDAToolkit_NVCC_EXECUTABLE}'), cuDNN "
                     "('${DTBENCH_CUDNN_LIBRARY}'), NCCL ('${DTBENCH_NCCL_LIBRARY}')")
    if(DTBENCH_CUDA STREQUAL "ON")
      message(FATAL_ERROR "DTBENCH_CUDA=ON but not everything was found: ${cuda_missing}")
    endif()
    message(STATUS "CUDA backend: not built (DTBENCH_CUDA=AUTO; missing one of ${cuda_missing})")
  endif()
endif()

if(DTBENCH_CUDA_TOOLKIT_FOUND)
  # The device machines are A100 / H100 / H200: native code for sm_80 and sm_90 only keeps nvcc's
  # time modest (every .cu file is compiled once per architecture); PTX for sm_90 lets newer
  # GPUs compile it at load.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80-real 90)
  endif()
  set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  add_library(dtbench_cudnn UNKNOWN IMPORTED)
  set_target_properties(dtbench_cudnn PROPERTIES IMPORTED_LOCATION ${DTBENCH_CUDNN_LIBRARY}
                        INTERFACE_INCLUDE_DIRECTORIES ${DTBENCH_CUDNN_INCLUDE_DIR})
  add_library(dtbench_nccl UNKNOWN IMPORTED)
  set_target_properties(dtbench_nccl PROPERTIES IMPORTED_LOCATION ${DTBENCH_NCCL_LIBRARY}
                        INTERFACE_INCLUDE_DIRECTORIES ${DTBENCH_NCCL_INCLUDE_DIR})
  set(DTBENCH_CUDA_ENABLED ON)
  message(STATUS "CUDA backend: built (toolkit ${CUDAToolkit_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}, "
                 "cuDNN ${DTBENCH_CUDNN_LIBRARY}, NCCL ${DTBENCH_NCCL_LIBRARY})")
endif()
