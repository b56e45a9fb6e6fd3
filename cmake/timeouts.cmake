# simdbloom_default_timeouts(SECONDS): every test of the current directory that has no TIMEOUT of
# its own gets SECONDS, so that a test that hangs fails the run in minutes, naming itself,
# instead of stalling it until CI's limit. Called at the end of each CMakeLists.txt that adds
# tests (set_tests_properties reaches only the tests of its own directory in CMake 3.25).
# Generous: several times a test's run on the slowest job (ASan + UBSan, or qemu).
function(simdbloom_default_timeouts seconds)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(test ${tests})
    get_test_property(${test} TIMEOUT timeout)
    if(NOT timeout)
      set_tests_properties(${test} PROPERTIES TIMEOUT ${seconds})
    endif()
  endforeach()
endfunction()
