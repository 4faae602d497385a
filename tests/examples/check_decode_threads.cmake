# The demo on 1, 2 and 3 threads (a job pool as the executor, BLAS at 1): every step's token the
# same (each run's report lists them) and the logits bitwise the same (the hash the demo prints),
# each run passing its own checks (ambient and scoped
# bitwise identical, 0 allocator calls in the scoped steady state).  At the demo's size the
# [256, 1024] projections are two row blocks each, so the pool really shares them.
#   cmake -DDECODE=path/to/decode -DWORK=dir -P check_decode_threads.cmake
file(MAKE_DIRECTORY "${WORK}")
foreach(threads 1 2 3)
  execute_process(COMMAND "${DECODE}" --threads ${threads} --report "${WORK}/threads-${threads}.json"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "decode --threads ${threads} failed (${rc}):\n${out}${err}")
  endif()
  if(NOT out MATCHES "; ${threads} thread")
    message(FATAL_ERROR "decode --threads ${threads} does not say it runs on ${threads}:\n${out}")
  endif()
  file(READ "${WORK}/threads-${threads}.json" report)
  string(JSON steps LENGTH "${report}" modes scoped)
  set(tokens "")
  math(EXPR last "${steps} - 1")
  foreach(i RANGE ${last})
    string(JSON token GET "${report}" modes scoped ${i} token)
    string(APPEND tokens " ${token}")
  endforeach()
  string(REGEX MATCH "logits hash: [0-9a-f]+" hash "${out}")
  set(tokens_${threads} "${tokens} (${hash})")
endforeach()
if(NOT tokens_1 STREQUAL tokens_2 OR NOT tokens_1 STREQUAL tokens_3 OR NOT tokens_1 MATCHES "logits hash")
  message(FATAL_ERROR "tokens or logits differ with the thread count:\n1:${tokens_1}\n2:${tokens_2}\n3:${tokens_3}")
endif()
message("decode on 1, 2 and 3 threads: the same ${steps} tokens and logits:${tokens_1}")
