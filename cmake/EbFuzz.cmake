# EB_FUZZ=ON: libFuzzer targets (tests/fuzz), which need clang (configure with
# -DCMAKE_C_COMPILER=clang; on Debian 12 the runtime comes from libclang-rt-14-dev). Everything is
# compiled with coverage instrumentation (-fsanitize=fuzzer-no-link) so the fuzzer sees the
# library code; combine with EB_SANITIZE=address,undefined. The corpus replay (fuzz.replay_onnx)
# needs none of this and runs in every build.
option(EB_FUZZ "edgebench: build the libFuzzer targets (clang only)" OFF)
if(EB_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "EB_FUZZ=ON needs clang: configure with -DCMAKE_C_COMPILER=clang "
                        "(scripts/setup.sh installs it)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
  add_link_options(-fsanitize=fuzzer-no-link)
endif()

# eb_fuzz_target(name SOURCES... LIBS...): a libFuzzer executable (only with EB_FUZZ).
function(eb_fuzz_target name)
  cmake_parse_arguments(F "" "" "SOURCES;LIBS" ${ARGN})
  if(NOT EB_FUZZ)
    return()
  endif()
  add_executable(${name} ${F_SOURCES})
  eb_target_defaults(${name})
  target_link_libraries(${name} PRIVATE ${F_LIBS})
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
endfunction()
