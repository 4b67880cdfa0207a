# cmake -DFX=fx -DPLUGIN=lib.so -DPIPELINE=p,q -DGRAPH=in.fx.json
#       -DEXPECTED=code.py -DOUT=dir [-DINPUTS=in.pt] -P check_pass.cmake
#
# Runs the pipeline on GRAPH with the plugin loaded (fx run), checks that
# the code fx generates for the result is EXPECTED byte for byte and, with
# INPUTS, that the result runs on them (fx exec).
foreach(var FX PLUGIN PIPELINE GRAPH EXPECTED OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_pass.cmake: -D${var}=... is required")
  endif()
endforeach()
file(MAKE_DIRECTORY "${OUT}")
set(run_args run "${GRAPH}" --plugin "${PLUGIN}" --pipeline "${PIPELINE}"
             -o "${OUT}/out.fx.json")
if(DEFINED INPUTS)
  list(APPEND run_args --inputs "${INPUTS}")
endif()

execute_process(COMMAND "${FX}" ${run_args} RESULT_VARIABLE status
                ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "fx run failed (${status}):\n${err}")
endif()

execute_process(COMMAND "${FX}" code "${OUT}/out.fx.json"
                RESULT_VARIABLE status OUTPUT_VARIABLE code ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "fx code failed (${status}):\n${err}")
endif()
file(READ "${EXPECTED}" expected)
if(NOT code STREQUAL expected)
  file(WRITE "${OUT}/actual.py" "${code}")
  message(FATAL_ERROR "the code after ${PIPELINE} differs from ${EXPECTED}:\n"
                      "${code}\n(written to ${OUT}/actual.py)")
endif()

if(DEFINED INPUTS)
  execute_process(COMMAND "${FX}" exec "${OUT}/out.fx.json" --inputs "${INPUTS}"
                          --outputs "${OUT}/output.pt"
                  RESULT_VARIABLE status ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "fx exec failed (${status}):\n${err}")
  endif()
endif()
