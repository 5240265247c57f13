# CTest's consumer-example (cmake -P): attn's install tree, the example built
# against it and run, and the example configured against the build tree.

function(run)
  cmake_parse_arguments(ARG "" "" "COMMAND" ${ARGN})
  message(STATUS "consumer-example: ${ARG_COMMAND}")
  execute_process(COMMAND ${ARG_COMMAND} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer-example: failed (${rc}): ${ARG_COMMAND}")
  endif()
endfunction()

set(prefix ${WORK_DIR}/install)
file(REMOVE_RECURSE ${prefix})
run(COMMAND ${CMAKE_COMMAND} --install ${ATTN_BUILD_DIR} --prefix ${prefix}
            --component attn-dev)

set(configure_args -G Ninja -DCMAKE_MAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}
  -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release)
if(CXX_LAUNCHER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_LAUNCHER})
endif()

# The install tree: configure, build, run.
set(build ${WORK_DIR}/build-install)
run(COMMAND ${CMAKE_COMMAND} ${configure_args} -S ${CONSUMER_SOURCE_DIR}
            -B ${build} -DAttn_DIR=${prefix}/lib/cmake/attn)
run(COMMAND ${CMAKE_COMMAND} --build ${build})
execute_process(
  COMMAND ${build}/attn-lower ${CONSUMER_SOURCE_DIR}/example.mlir
  COMMAND ${MLIR_RUNNER} -e main -entry-point-result=void
          -shared-libs=${RUNNER_LIBS}
  OUTPUT_VARIABLE out RESULTS_VARIABLE rcs)
message(STATUS "consumer-example: attn-lower | mlir-runner: ${rcs}\n${out}")
if(NOT rcs STREQUAL "0;0" OR NOT out MATCHES "\\[\\[\\[\\[2, +3\\],[ \n]+\\[2, +3\\]\\]\\]\\]")
  message(FATAL_ERROR "consumer-example: expected the rows [2, 3]")
endif()

# The build tree's package: the same targets resolve.
run(COMMAND ${CMAKE_COMMAND} ${configure_args} -S ${CONSUMER_SOURCE_DIR}
            -B ${WORK_DIR}/build-tree -DAttn_DIR=${ATTN_BUILD_DIR}/lib/cmake/attn)
