# EB_SANITIZE=address,undefined or EB_SANITIZE=thread: instrument everything we compile.
if(EB_SANITIZE)
  set(EB_SAN_FLAGS -fsanitize=${EB_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_compile_options(${EB_SAN_FLAGS})
  add_link_options(-fsanitize=${EB_SANITIZE})
  add_compile_definitions(EB_SANITIZED=1)
endif()
