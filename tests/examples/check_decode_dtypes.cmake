# The demo with its weights in each storage dtype (converted at load, read as stored): each run
# passes its own checks (ambient and scoped bitwise identical, 0 allocator calls in the scoped
# steady state), and on 1 and 3 threads gives the same tokens and logits (the product's outputs
# split on the executor, each a whole dot product).  Agreement with f32's greedy tokens is printed,
# not required: it rests on logit margins, which the CPU's kernels move in the last bits.
#   cmake -DDECODE=path/to/decode -P check_decode_dtypes.cmake
execute_process(COMMAND "${DECODE}" --threads 1 --tokens 24 RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX MATCH "tokens: [0-9 ]+" f32_tokens "${out}")
foreach(dtype f16 bf16 q8_0 q4_0)
  foreach(threads 1 3)
    execute_process(COMMAND "${DECODE}" --weights-dtype ${dtype} --threads ${threads} --tokens 24
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "decode --weights-dtype ${dtype} --threads ${threads} failed (${rc}):\n${out}${err}")
    endif()
    if(NOT out MATCHES "in ${dtype};" OR NOT out MATCHES "scoped steady state: 0 allocator calls")
      message(FATAL_ERROR "decode --weights-dtype ${dtype}: not in ${dtype}, or the steady state allocates:\n${out}")
    endif()
    string(REGEX MATCH "logits hash: [0-9a-f]+" hash_${threads} "${out}")
    string(REGEX MATCH "tokens: [0-9 ]+" tokens_${threads} "${out}")
  endforeach()
  if(NOT hash_1 STREQUAL hash_3 OR NOT tokens_1 STREQUAL tokens_3)
    message(FATAL_ERROR "${dtype}: 1 and 3 threads differ: ${hash_1} / ${hash_3}")
  endif()
  set(agrees "differs from f32's")
  if(tokens_1 STREQUAL f32_tokens)
    set(agrees "f32's tokens")
  endif()
  message("decode in ${dtype}: ${tokens_1} (${hash_1}), the same on 3 threads; ${agrees}")
endforeach()
