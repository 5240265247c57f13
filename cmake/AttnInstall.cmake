# The CMake package of attn: find_package(Attn CONFIG) from an install tree
# (cmake --install BUILD --prefix DIR; DIR/lib/cmake/attn) or from the build
# tree (BUILD/lib/cmake/attn). The libraries are added with DISABLE_INSTALL
# (their install rules would join MLIR's own export set); they are installed
# and exported here, in attn's.

include(CMakePackageConfigHelpers)

set(ATTN_EXPORTED_LIBRARIES
  AttnDialect
  AttnUtils
  AttnTransforms
  AttnConversion
  AttnCpuCodegen
  AttnGpuCodegen
  AttnTuning
  AttnPipelines
  AttnInit
  )
set(ATTN_INSTALL_PACKAGE_DIR lib${LLVM_LIBDIR_SUFFIX}/cmake/attn)
set(ATTN_BUILD_PACKAGE_DIR ${CMAKE_BINARY_DIR}/lib${LLVM_LIBDIR_SUFFIX}/cmake/attn)

foreach(lib ${ATTN_EXPORTED_LIBRARIES})
  target_include_directories(${lib} INTERFACE
    $<BUILD_INTERFACE:${ATTN_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${ATTN_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:include>)
endforeach()

install(TARGETS ${ATTN_EXPORTED_LIBRARIES} AttnPlugin attn_runner_utils
  EXPORT AttnTargets
  ARCHIVE DESTINATION lib${LLVM_LIBDIR_SUFFIX} COMPONENT attn-dev
  LIBRARY DESTINATION lib${LLVM_LIBDIR_SUFFIX} COMPONENT attn-dev)
install(DIRECTORY ${ATTN_SOURCE_DIR}/include/attn
  DESTINATION include COMPONENT attn-dev
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${ATTN_BINARY_DIR}/include/attn
  DESTINATION include COMPONENT attn-dev
  FILES_MATCHING PATTERN "*.inc" PATTERN "CMakeFiles" EXCLUDE)
install(EXPORT AttnTargets
  NAMESPACE Attn::
  DESTINATION ${ATTN_INSTALL_PACKAGE_DIR}
  COMPONENT attn-dev)

# Build tree: the same targets, read from where they were built.
export(EXPORT AttnTargets NAMESPACE Attn::
  FILE ${ATTN_BUILD_PACKAGE_DIR}/AttnTargets.cmake)

write_basic_package_version_file(
  ${ATTN_BUILD_PACKAGE_DIR}/AttnConfigVersion.cmake
  VERSION ${LLVM_VERSION_MAJOR}.${LLVM_VERSION_MINOR}
  COMPATIBILITY SameMajorVersion)

# One template, two configs: the build tree's include dirs are the source and
# binary include/ (the generated .inc), the install tree's is PREFIX/include.
set(ATTN_CONFIG_INCLUDE_DIR ${ATTN_SOURCE_DIR}/include)
set(ATTN_CONFIG_EXTRA_INCLUDE_DIRS "\"${ATTN_BINARY_DIR}/include\"")
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/AttnConfig.cmake.in
  ${ATTN_BUILD_PACKAGE_DIR}/AttnConfig.cmake
  INSTALL_DESTINATION ${ATTN_BUILD_PACKAGE_DIR}
  INSTALL_PREFIX ${CMAKE_BINARY_DIR}
  PATH_VARS ATTN_CONFIG_INCLUDE_DIR)

set(ATTN_CONFIG_INCLUDE_DIR include)
set(ATTN_CONFIG_EXTRA_INCLUDE_DIRS "")
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/AttnConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/install/AttnConfig.cmake
  INSTALL_DESTINATION ${ATTN_INSTALL_PACKAGE_DIR}
  PATH_VARS ATTN_CONFIG_INCLUDE_DIR)
install(FILES
  ${CMAKE_BINARY_DIR}/cmake/install/AttnConfig.cmake
  ${ATTN_BUILD_PACKAGE_DIR}/AttnConfigVersion.cmake
  DESTINATION ${ATTN_INSTALL_PACKAGE_DIR}
  COMPONENT attn-dev)

# The tools (component attn-tools: `cmake --install BUILD --component
# attn-tools --prefix DIR`) and the Python package's native files (component
# attn-python: what python/pyproject.toml's wheel carries beside the Python
# files). Either way attn-compile sits in a bin/ beside a lib/ that holds the
# CUDA runtime archive it links into cuda libraries (lib/Compile/Aot.cpp
# looks there first). Everything else they use at run time is the system's,
# by absolute path: libMLIR.so and libLLVM.so (the RPATH below), libomp and
# the C runner utils (LLVM_LIBRARY_DIR), the C compiler, the CUDA toolkit.
set(ATTN_INSTALLED_TOOLS attn-compile attn-run attn-opt)
set_target_properties(${ATTN_INSTALLED_TOOLS} PROPERTIES
  INSTALL_RPATH "\$ORIGIN/../lib${LLVM_LIBDIR_SUFFIX};${LLVM_LIBRARY_DIR}")
install(TARGETS ${ATTN_INSTALLED_TOOLS}
  RUNTIME DESTINATION bin COMPONENT attn-tools)
install(TARGETS attn-compile
  RUNTIME DESTINATION attn/_native/bin COMPONENT attn-python)
if(TARGET AttnCudaRuntime)
  install(FILES $<TARGET_FILE:AttnCudaRuntime>
    DESTINATION lib COMPONENT attn-tools)
  install(FILES $<TARGET_FILE:AttnCudaRuntime>
    DESTINATION attn/_native/lib COMPONENT attn-python)
endif()
