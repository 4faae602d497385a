# Runs each of PROGRAMS (a ;-list) with --help: each must exit 0 within 10 s and print a usage line.
foreach(program IN LISTS PROGRAMS)
  execute_process(COMMAND ${program} --help RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 10)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${program} --help: exit status ${rc}\n${out}${err}")
  endif()
  if(NOT "${out}${err}" MATCHES "usage:")  # Criterion prints its usage on stderr
    message(FATAL_ERROR "${program} --help printed no usage line:\n${out}${err}")
  endif()
  get_filename_component(name ${program} NAME)
  message(STATUS "${name} --help: usage, exit 0")
endforeach()
list(LENGTH PROGRAMS count)
message(STATUS "${count} programs answer --help")
