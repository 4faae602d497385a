# Saves the demo's seeded weights to safetensors, decodes again from the file, and checks that
# the tokens are the same: the loader path of examples/decode.
#   cmake -DDECODE=path/to/decode -DWORK=dir -P check_decode_weights.cmake
file(MAKE_DIRECTORY "${WORK}")
set(args --d-model 64 --layers 2 --heads 4 --vocab 128 --tokens 12)
execute_process(COMMAND "${DECODE}" ${args} --save-weights "${WORK}/w.safetensors" RESULT_VARIABLE rc1 OUTPUT_VARIABLE seeded)
execute_process(COMMAND "${DECODE}" --heads 4 --tokens 12 --weights "${WORK}/w.safetensors" RESULT_VARIABLE rc2
                OUTPUT_VARIABLE loaded ERROR_VARIABLE err)
if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0)
  message(FATAL_ERROR "decode failed (${rc1}, ${rc2}): ${err}")
endif()
string(REGEX MATCH "tokens:[^\n]*" a "${seeded}")
string(REGEX MATCH "tokens:[^\n]*" b "${loaded}")
if(NOT a STREQUAL b OR a STREQUAL "")
  message(FATAL_ERROR "tokens differ: '${a}' vs '${b}'")
endif()
if(NOT loaded MATCHES "d_model 64, 2 layers")
  message(FATAL_ERROR "the file's shapes were not used:\n${loaded}")
endif()
message("decode weights ok: ${b}")
