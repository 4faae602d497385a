# The C# binding's native layer alone: SWIG's C wrapper, tensorlife_csharp, linked to the
# shared library.  CMakeLists.txt here adds the package; a cross build (scripts/cross.sh, with
# -DTL_BUILD_CSHARP_NATIVE=ON) builds just this, for the package's runtimes/<rid>/native.
find_program(TL_SWIG swig REQUIRED)
set(gen ${CMAKE_CURRENT_BINARY_DIR}/gen)
add_custom_command(OUTPUT ${gen}/tensorlife_csharp.c
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${gen}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${gen}
  COMMAND ${TL_SWIG} -csharp -namespace TensorLife.Raw -dllimport tensorlife_csharp -w453
          -I${PROJECT_SOURCE_DIR}/include -I${PROJECT_SOURCE_DIR}/bindings/runtime -o ${gen}/tensorlife_csharp.c
          -outdir ${gen} ${PROJECT_SOURCE_DIR}/bindings/tl.i
  DEPENDS ${PROJECT_SOURCE_DIR}/bindings/tl.i ${PROJECT_SOURCE_DIR}/bindings/runtime/tlb.h
          ${PROJECT_SOURCE_DIR}/bindings/runtime/tlb_mono.h
  COMMENT "SWIG: the C# layer")
# SWIG runs in this target alone: three targets list its output, and under make -j each ran it at
# once, one run's rm -rf under another's compile (an installed wrapper without the callbacks).
add_custom_target(tensorlife_csharp_swig DEPENDS ${gen}/tensorlife_csharp.c)
# The wrapper's sources, for the package's natives here and the installed library (CMakeLists.txt).
set(tl_csharp_native_sources ${gen}/tensorlife_csharp.c ${PROJECT_SOURCE_DIR}/bindings/runtime/tlb.c
    ${PROJECT_SOURCE_DIR}/bindings/runtime/tlb_mono.c)
add_library(tensorlife_csharp SHARED ${tl_csharp_native_sources})
target_include_directories(tensorlife_csharp PRIVATE ${PROJECT_SOURCE_DIR}/bindings/runtime)
target_link_libraries(tensorlife_csharp PRIVATE tensorlife)
add_dependencies(tensorlife_csharp tensorlife_csharp_swig)
# $ORIGIN only, in the build tree too: the package must not point into this build.
set_target_properties(tensorlife_csharp PROPERTIES INSTALL_RPATH "$ORIGIN" BUILD_WITH_INSTALL_RPATH ON)
if(WIN32)
  set_target_properties(tensorlife_csharp PROPERTIES PREFIX "")  # tensorlife_csharp.dll, as P/Invoke looks for it
endif()
# runtimes/<rid>/native as the package carries it: the wrapper and the library it loads.
set(natives ${CMAKE_CURRENT_BINARY_DIR}/natives)
if(WIN32)
  set(tl_csharp_library $<TARGET_FILE:tensorlife>)
else()
  set(tl_csharp_library $<TARGET_SONAME_FILE:tensorlife>)
endif()
add_custom_command(OUTPUT ${natives}.stamp
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${natives}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${natives}
  COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:tensorlife_csharp> ${tl_csharp_library} ${natives}/
  COMMAND ${CMAKE_COMMAND} -E touch ${natives}.stamp
  DEPENDS tensorlife_csharp tensorlife
  COMMENT "C#: the natives of runtimes/<rid>/native")
add_custom_target(tensorlife_csharp_natives ALL DEPENDS ${natives}.stamp)
