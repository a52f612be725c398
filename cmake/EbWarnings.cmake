# Warning flags, each probed so that an older compiler does not break the build (libuv style).
include(CheckCCompilerFlag)
set(EB_WARNING_FLAGS "")
foreach(flag -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla
             -Wformat=2 -Wno-format-nonliteral)
  string(MAKE_C_IDENTIFIER "EB_HAS${flag}" var)
  check_c_compiler_flag(${flag} ${var})
  if(${var})
    list(APPEND EB_WARNING_FLAGS ${flag})
  endif()
endforeach()
if(EB_WERROR)
  list(APPEND EB_WARNING_FLAGS -Werror)
endif()

# eb_target_defaults(target): the flags every edgebench target is compiled with.
function(eb_target_defaults target)
  foreach(flag ${EB_WARNING_FLAGS}) # C flags; the CUDA files set their own (src/CMakeLists.txt)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C>:${flag}>)
  endforeach()
  target_compile_definitions(${target} PRIVATE _POSIX_C_SOURCE=200809L _DEFAULT_SOURCE)
endfunction()
