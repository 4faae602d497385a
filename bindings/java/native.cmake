# The Java binding's native layer alone: SWIG's JNI wrapper with the C library linked in
# statically, staged as natives/<os>-<arch>/ for the jar.  CMakeLists.txt here adds the jar; a
# cross build (scripts/cross.sh, -DTL_BUILD_JAVA_NATIVE=ON) builds just this.
find_package(Java 17 REQUIRED COMPONENTS Development)
# jni.h from the JDK that javac belongs to (FindJNI would also ask for AWT, which a headless
# JDK lacks, and a JNI library links against no libjvm).
get_filename_component(tl_javac "${Java_JAVAC_EXECUTABLE}" REALPATH)
get_filename_component(tl_java_home "${tl_javac}" DIRECTORY)
get_filename_component(tl_java_home "${tl_java_home}" DIRECTORY)
string(TOLOWER "${CMAKE_SYSTEM_NAME}" tl_os)
# A cross build names the target's jni_md.h (Windows': scripts/cross.sh takes it from Debian's
# OpenJDK sources); on Linux, any architecture's is the build machine's.
set(TL_JNI_MD_INCLUDE "${tl_java_home}/include/${tl_os}" CACHE PATH "The folder of the target's jni_md.h")
set(JNI_INCLUDE_DIRS ${tl_java_home}/include ${TL_JNI_MD_INCLUDE})
if(NOT EXISTS ${tl_java_home}/include/jni.h)
  message(FATAL_ERROR "TL_BUILD_JAVA: no jni.h under ${tl_java_home}/include")
endif()
find_program(TL_SWIG swig REQUIRED)
include(UseJava)

set(gen ${CMAKE_CURRENT_BINARY_DIR}/gen)
set(classes ${CMAKE_CURRENT_BINARY_DIR}/classes)
string(TOLOWER "${CMAKE_SYSTEM_PROCESSOR}" tl_arch)
if(tl_arch MATCHES "amd64|x86_64")
  set(tl_arch x86_64)
endif()
set(TL_JAVA_PLATFORM ${tl_os}-${tl_arch})

add_custom_command(OUTPUT ${gen}/tensorlife_jni.c
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${gen}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${gen}/org/tensorlife/raw
  COMMAND ${TL_SWIG} -java -package org.tensorlife.raw -I${PROJECT_SOURCE_DIR}/include
          -I${PROJECT_SOURCE_DIR}/bindings/runtime
          -o ${gen}/tensorlife_jni.c -outdir ${gen}/org/tensorlife/raw ${PROJECT_SOURCE_DIR}/bindings/tl.i
  DEPENDS ${PROJECT_SOURCE_DIR}/bindings/tl.i ${PROJECT_SOURCE_DIR}/bindings/runtime/tlb.h
  COMMENT "SWIG: the Java layer")
add_library(tensorlife_jni SHARED ${gen}/tensorlife_jni.c ${PROJECT_SOURCE_DIR}/bindings/runtime/tlb.c)
target_include_directories(tensorlife_jni PRIVATE ${JNI_INCLUDE_DIRS} ${PROJECT_SOURCE_DIR}/bindings/runtime)
target_link_libraries(tensorlife_jni PRIVATE tensorlife_static)
# The core's symbols stay inside: only the JNI entry points are exported (JNIEXPORT's
# dllexport alone decides on Windows; tensorlife_jni.dll, as System.mapLibraryName names it).
if(WIN32)
  set_target_properties(tensorlife_jni PROPERTIES PREFIX "")
else()
  target_link_options(tensorlife_jni PRIVATE "LINKER:--exclude-libs,ALL")
endif()
target_compile_options(tensorlife_jni PRIVATE -fno-strict-aliasing)

set(natives ${CMAKE_CURRENT_BINARY_DIR}/natives)
add_custom_command(OUTPUT ${natives}.stamp
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${natives}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${natives}/${TL_JAVA_PLATFORM}
  COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:tensorlife_jni> ${natives}/${TL_JAVA_PLATFORM}/
  COMMAND ${CMAKE_COMMAND} -E touch ${natives}.stamp
  DEPENDS tensorlife_jni
  COMMENT "Java: natives/${TL_JAVA_PLATFORM}")
add_custom_target(tensorlife_jni_natives ALL DEPENDS ${natives}.stamp)
