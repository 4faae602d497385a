# The demo with tl_attention and with the unfused reference path (a masked softmax over the
# whole cache): the same greedy tokens at the demo's default size, and each run passes its own
# checks (ambient and scoped bitwise identical, 0 allocator calls in the scoped steady state).
#   cmake -DDECODE=path/to/decode -P check_decode_attention.cmake
execute_process(COMMAND "${DECODE}" RESULT_VARIABLE rc1 OUTPUT_VARIABLE fused ERROR_VARIABLE err1)
execute_process(COMMAND "${DECODE}" --unfused-attention RESULT_VARIABLE rc2 OUTPUT_VARIABLE unfused ERROR_VARIABLE err2)
if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0)
  message(FATAL_ERROR "decode failed (fused ${rc1}, unfused ${rc2}):\n${fused}${err1}\n${unfused}${err2}")
endif()
string(REGEX MATCH "tokens:[^\n]*" a "${fused}")
string(REGEX MATCH "tokens:[^\n]*" b "${unfused}")
if(NOT a STREQUAL b OR a STREQUAL "")
  message(FATAL_ERROR "fused and unfused attention decode different tokens: '${a}' vs '${b}'")
endif()
foreach(run fused unfused)
  if(NOT ${run} MATCHES "scoped steady state: 0 allocator calls")
    message(FATAL_ERROR "${run}: the scoped steady state allocates:\n${${run}}")
  endif()
endforeach()
message("decode attention ok: ${a}")
