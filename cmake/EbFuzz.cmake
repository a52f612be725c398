# EB_FUZZ=ON: the libFuzzer targets (tests/fuzz), which need clang (configure with
# -DCMAKE_C_COMPILER=clang; on Debian 12 the runtime comes from libclang-rt-14-dev, which
# scripts/setup.sh --for test installs). Everything is compiled with coverage instrumentation
# (-fsanitize=fuzzer-no-link) so the fuzzer sees the library code; combine with
# EB_SANITIZE=address,undefined. scripts/fuzz.sh configures such a build (build-fuzz), builds
# only the targets and runs them (`make test` for EB_FUZZ_SECONDS each, `make fuzz` for as long
# as asked).
#
# The corpus replays need none of this and run in every build (ctest label "fuzz"):
#   fuzz.replay_<name>   the target once on every file of tests/fuzz/corpus/<name>, then on
#                        every file of ../shared/data/hostile whose name matches the target's
#                        patterns (a line says so when the folder is absent or nothing matches)
option(EB_FUZZ "edgebench: build the libFuzzer targets (clang only)" OFF)
if(EB_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "EB_FUZZ=ON needs clang: configure with -DCMAKE_C_COMPILER=clang "
                        "(scripts/setup.sh installs it)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
  add_link_options(-fsanitize=fuzzer-no-link)
endif()

# eb_fuzz_add(name SOURCES... LIBS... DEFS... HOSTILE patterns): the libFuzzer executable
# fuzz_<name> (only with EB_FUZZ), its replay twin fuzz_<name>_replay (every build: the same
# sources with tests/fuzz/replay_main.c as main), and the ctest entry fuzz.replay_<name>. DEFS are compile definitions (one source serving several targets);
# HOSTILE is a ','-separated list of shell patterns ("*.png", "*.jpg,*.jpeg").
function(eb_fuzz_add name)
  cmake_parse_arguments(F "" "HOSTILE" "SOURCES;LIBS;DEFS" ${ARGN})
  set(dir "${CMAKE_CURRENT_SOURCE_DIR}/fuzz")
  if(EB_FUZZ)
    add_executable(fuzz_${name} ${F_SOURCES})
    eb_target_defaults(fuzz_${name})
    target_include_directories(fuzz_${name} PRIVATE "${dir}")
    target_compile_definitions(fuzz_${name} PRIVATE ${F_DEFS})
    target_link_libraries(fuzz_${name} PRIVATE ${F_LIBS})
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
  endif()
  add_executable(fuzz_${name}_replay "${dir}/replay_main.c" ${F_SOURCES})
  eb_target_defaults(fuzz_${name}_replay)
  target_include_directories(fuzz_${name}_replay PRIVATE "${dir}")
  target_compile_definitions(fuzz_${name}_replay PRIVATE ${F_DEFS})
  target_link_libraries(fuzz_${name}_replay PRIVATE ${F_LIBS})
  math(EXPR t "300 * ${EB_TEST_TIMEOUT_MULTIPLIER}")
  add_test(NAME fuzz.replay_${name}
           COMMAND fuzz_${name}_replay "${dir}/corpus/${name}"
                   --hostile "${EB_SHARED_DATA_DEFAULT}/hostile" "${F_HOSTILE}")
  set_tests_properties(fuzz.replay_${name} PROPERTIES
                       TIMEOUT ${t} LABELS "fuzz" SKIP_RETURN_CODE 77 ENVIRONMENT "${EB_SAN_ENV}")
endfunction()
