# EB_CUDA: the native engine's CUDA device (src/engine/cuda). AUTO builds it when nvcc and the
# cuDNN/cuBLAS headers and libraries are found (and says why not otherwise); ON makes a missing
# piece a configure error; OFF leaves it out. The kernels are compiled for Jetson Orin (sm_87)
# and Hopper (sm_90, plus its PTX for newer GPUs): EB_CUDA_ARCHITECTURES.
set(EB_CUDA "AUTO" CACHE STRING "edgebench: CUDA device of the native engine (AUTO, ON, OFF)")
set_property(CACHE EB_CUDA PROPERTY STRINGS AUTO ON OFF)
set(EB_CUDA_ARCHITECTURES "87-real;90" CACHE STRING
    "edgebench: CUDA architectures (CMAKE_CUDA_ARCHITECTURES syntax)")
set(EB_HAVE_CUDA OFF)

if(NOT EB_CUDA STREQUAL "OFF")
  set(_eb_cuda_missing "")
  find_program(EB_NVCC nvcc HINTS ENV CUDA_HOME ENV CUDA_PATH PATHS /usr/local/cuda/bin)
  if(NOT EB_NVCC)
    list(APPEND _eb_cuda_missing "nvcc (the CUDA toolkit)")
    set(_eb_cuda_root "/usr/local/cuda")
  else()
    get_filename_component(_eb_cuda_bin "${EB_NVCC}" DIRECTORY)
    get_filename_component(_eb_cuda_root "${_eb_cuda_bin}" DIRECTORY)
  endif()
  set(_eb_hints "${_eb_cuda_root}" "${_eb_cuda_root}/targets/${CMAKE_SYSTEM_PROCESSOR}-linux")
  find_path(EB_CUDA_INCLUDE cuda_runtime_api.h HINTS ${_eb_hints} PATH_SUFFIXES include)
  find_path(EB_CUDNN_INCLUDE cudnn.h HINTS ${_eb_hints} PATH_SUFFIXES include)
  find_path(EB_NVTX_INCLUDE nvtx3/nvToolsExt.h HINTS ${_eb_hints} PATH_SUFFIXES include)
  find_library(EB_CUDART_STATIC cudart_static HINTS ${_eb_hints} PATH_SUFFIXES lib64 lib)
  find_library(EB_CUDNN_LIB cudnn HINTS ${_eb_hints} PATH_SUFFIXES lib64 lib)
  find_library(EB_CUBLAS_LIB cublas HINTS ${_eb_hints} PATH_SUFFIXES lib64 lib)
  find_library(EB_CUBLASLT_LIB cublasLt HINTS ${_eb_hints} PATH_SUFFIXES lib64 lib)
  foreach(v EB_CUDA_INCLUDE EB_CUDNN_INCLUDE EB_NVTX_INCLUDE EB_CUDART_STATIC EB_CUDNN_LIB
            EB_CUBLAS_LIB EB_CUBLASLT_LIB)
    if(NOT ${v})
      list(APPEND _eb_cuda_missing "${v}")
    endif()
  endforeach()
  if(EB_KERNEL_TESTS_ONLY OR CMAKE_CROSSCOMPILING)
    set(_eb_cuda_missing "a native build (this is a cross or kernel-tests-only build)")
  endif()
  if(_eb_cuda_missing)
    if(EB_CUDA STREQUAL "ON")
      message(FATAL_ERROR "EB_CUDA=ON but missing: ${_eb_cuda_missing}. Install the CUDA toolkit "
                          "with cuDNN 9 and cuBLAS, or configure with -DEB_CUDA=OFF.")
    endif()
    message(STATUS "edgebench: CUDA device off (missing: ${_eb_cuda_missing})")
  else()
    set(CMAKE_CUDA_COMPILER "${EB_NVCC}")
    set(CMAKE_CUDA_ARCHITECTURES "${EB_CUDA_ARCHITECTURES}")
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    enable_language(CUDA)
    set(EB_HAVE_CUDA ON)
    message(STATUS "edgebench: CUDA device on (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, "
                   "architectures ${EB_CUDA_ARCHITECTURES})")
  endif()
endif()

# NVTX ranges (include/eb/nvtx.h): the toolkit's header-only nvtx3, used wherever its headers
# are found, whether or not the CUDA device is built (EB_CUDA=OFF skips the search above, so
# it is repeated here). Only src/core/nvtx.c includes them; it needs libdl (src/CMakeLists.txt).
if(NOT EB_NVTX_INCLUDE)
  find_path(EB_NVTX_INCLUDE nvtx3/nvToolsExt.h HINTS ENV CUDA_HOME ENV CUDA_PATH
            PATHS /usr/local/cuda PATH_SUFFIXES include)
endif()
set(EB_HAVE_NVTX OFF)
if(EB_NVTX_INCLUDE AND NOT CMAKE_CROSSCOMPILING)
  set(EB_HAVE_NVTX ON)
endif()
message(STATUS "edgebench: NVTX ranges ${EB_HAVE_NVTX} (nvtx3 headers: ${EB_NVTX_INCLUDE})")
