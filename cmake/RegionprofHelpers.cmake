# Shared build helpers: warnings policy and Boost.Test discovery (one ctest test per test case).

# Warnings as errors on our own code only (never on third-party headers, which come in as SYSTEM).
# GCC 12 at -O3 (Release) reports -Wrestrict inside libstdc++'s char_traits::copy for plain
# `"literal" + std::string` (GCC bugs 105329, 105651): a false positive, so only a warning on GCC 12.
function(regionprof_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion -Werror>
    $<$<AND:$<COMPILE_LANG_AND_ID:CXX,GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-error=restrict>)
endfunction()

set(REGIONPROF_DISCOVER_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/BoostTestDiscover.cmake)

# regionprof_add_boost_test(<target> SOURCES ... [LIBS ...] [LABELS ...] [ENVIRONMENT ...] [TIMEOUT s] [NO_PCH])
#
# Builds a Boost.Test program and registers each of its test cases as its own ctest test named
# `<suite>/<case>`, discovered after each build from `--list_content` (like gtest_discover_tests).
# A test case that exits with code 77 is reported by ctest as skipped (used for `gpu` tests without a
# device and for tests whose data folder is not set).
function(regionprof_add_boost_test target)
  cmake_parse_arguments(arg "NO_PCH" "TIMEOUT" "SOURCES;LIBS;LABELS;ENVIRONMENT" ${ARGN})
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 300)
  endif()
  add_executable(${target} ${arg_SOURCES})
  target_link_libraries(${target} PRIVATE ${arg_LIBS} Boost::unit_test_framework)
  target_compile_definitions(${target} PRIVATE BOOST_TEST_DYN_LINK)
  regionprof_warnings(${target})
  # The tests' one precompiled header (tests/CMakeLists.txt, regionprof_test_pch) for the program's C++
  # files, but the one that defines BOOST_TEST_MODULE (it must precede Boost.Test's header) and programs
  # built with other flags (NO_PCH: LibTorch's). Boost.JSON's definitions are the header's too.
  if(TARGET regionprof_test_pch AND NOT arg_NO_PCH)
    target_link_libraries(${target} PRIVATE Boost::json)
    target_precompile_headers(${target} REUSE_FROM regionprof_test_pch)
    foreach(source IN LISTS arg_SOURCES)
      get_filename_component(source_path ${source} ABSOLUTE)
      file(STRINGS ${source_path} module_lines REGEX "^#define BOOST_TEST_MODULE")
      if(module_lines)
        set_source_files_properties(${source} TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
      endif()
    endforeach()
  endif()
  set(include_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_tests.cmake)
  string(REPLACE ";" "\\;" env "${arg_ENVIRONMENT}")
  string(REPLACE ";" "\\;" labels "${arg_LABELS}")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND}
      -D "EXECUTABLE=$<TARGET_FILE:${target}>"
      -D "OUTPUT=${include_file}"
      -D "LABELS=${labels}"
      -D "ENVIRONMENT=${env}"
      -D "TIMEOUT=${arg_TIMEOUT}"
      -D "WORKING_DIRECTORY=${PROJECT_SOURCE_DIR}"
      -P ${REGIONPROF_DISCOVER_SCRIPT}
    BYPRODUCTS ${include_file}
    VERBATIM)
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include_file})
endfunction()
