# Finds NCCL (nccl.h and libnccl) for gemmlab_dist. Sets NCCL_FOUND, NCCL_INCLUDE_DIR,
# NCCL_LIBRARY, NCCL_VERSION and the imported target NCCL::nccl. Where it looks, first match wins:
#   1. $NCCL_HOME (the CMake variable or the environment variable): include/ and lib/
#   2. the standard places and the CUDA toolkit (the toolkit of a CUDA 13 install may ship NCCL)
#   3. the pip wheel nvidia-nccl-cu13 (or -cu12): of the python3 on PATH (`import nvidia.nccl`),
#      and the one scripts/deps installs into .deps/nccl when nothing above has NCCL
set(_nccl_hints "")
foreach(_home "${NCCL_HOME}" "$ENV{NCCL_HOME}")
  if(_home)
    list(APPEND _nccl_hints "${_home}")
  endif()
endforeach()
set(_nccl_wheel_hints "${CMAKE_CURRENT_SOURCE_DIR}/.deps/nccl/nvidia/nccl")
find_program(_nccl_python NAMES python3 python)
if(_nccl_python)
  execute_process(
    COMMAND "${_nccl_python}" -c "import nvidia.nccl as m; print(list(m.__path__)[0])"
    OUTPUT_VARIABLE _nccl_py_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
    RESULT_VARIABLE _nccl_py_rc)
  if(_nccl_py_rc EQUAL 0 AND _nccl_py_dir)
    list(APPEND _nccl_wheel_hints "${_nccl_py_dir}")
  endif()
endif()

find_path(NCCL_INCLUDE_DIR nccl.h
  HINTS ${_nccl_hints} PATH_SUFFIXES include NO_DEFAULT_PATH)
find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${_nccl_wheel_hints} PATH_SUFFIXES include NO_DEFAULT_PATH)
# The wheels ship libnccl.so.2 only (no libnccl.so link), hence both names.
set(_nccl_names nccl libnccl.so.2)
find_library(NCCL_LIBRARY NAMES ${_nccl_names}
  HINTS ${_nccl_hints} PATH_SUFFIXES lib lib64 NO_DEFAULT_PATH)
find_library(NCCL_LIBRARY NAMES ${_nccl_names} HINTS ${CUDAToolkit_LIBRARY_DIR})
find_library(NCCL_LIBRARY NAMES ${_nccl_names}
  HINTS ${_nccl_wheel_hints} PATH_SUFFIXES lib NO_DEFAULT_PATH)

if(NCCL_INCLUDE_DIR AND EXISTS "${NCCL_INCLUDE_DIR}/nccl.h")
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _nccl_ver REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
  string(REGEX REPLACE ".*NCCL_MAJOR ([0-9]+).*NCCL_MINOR ([0-9]+).*NCCL_PATCH ([0-9]+).*"
         "\\1.\\2.\\3" NCCL_VERSION "${_nccl_ver}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NCCL REQUIRED_VARS NCCL_LIBRARY NCCL_INCLUDE_DIR
                                  VERSION_VAR NCCL_VERSION)
if(NCCL_FOUND AND NOT TARGET NCCL::nccl)
  add_library(NCCL::nccl UNKNOWN IMPORTED)
  set_target_properties(NCCL::nccl PROPERTIES
    IMPORTED_LOCATION "${NCCL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
endif()
