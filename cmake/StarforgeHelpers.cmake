# Project-wide CMake helpers. Every target links starforge_policy, which carries the compile
# policy in one place instead of directory-wide definitions.

add_library(starforge_policy INTERFACE)
target_compile_features(starforge_policy INTERFACE cxx_std_20)
target_compile_definitions(starforge_policy INTERFACE
    QT_NO_CAST_FROM_ASCII
    QT_NO_CAST_TO_ASCII
    QT_NO_CAST_FROM_BYTEARRAY
    QT_NO_CONTEXTLESS_CONNECT
    QT_NO_NARROWING_CONVERSIONS_IN_CONNECT
    QT_USE_QSTRINGBUILDER
    QT_NO_URL_CAST_FROM_STRING
    QT_DISABLE_DEPRECATED_UP_TO=0x060400
    STARFORGE_VERSION="${PROJECT_VERSION}")
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(starforge_policy INTERFACE
        -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual
        -Wcast-qual -Wformat=2 -Wimplicit-fallthrough)
    if(STARFORGE_WERROR)
        target_compile_options(starforge_policy INTERFACE -Werror)
    endif()
endif()
set(CMAKE_CXX_EXTENSIONS OFF)

# sf_add_library(NAME SOURCES ... [PUBLIC_LIBS ...] [PRIVATE_LIBS ...])
# A static library rooted at src/, so headers are included as "core/config/profile.h".
function(sf_add_library name)
    cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "SOURCES;PUBLIC_LIBS;PRIVATE_LIBS")
    if(ARG_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "sf_add_library(${name}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
    endif()
    add_library(${name} STATIC ${ARG_SOURCES})
    target_include_directories(${name} PUBLIC "${PROJECT_SOURCE_DIR}/src")
    target_link_libraries(${name} PUBLIC starforge_policy ${ARG_PUBLIC_LIBS} PRIVATE ${ARG_PRIVATE_LIBS})
    set_target_properties(${name} PROPERTIES
        CXX_EXTENSIONS OFF
        AUTOUIC_SEARCH_PATHS "${PROJECT_SOURCE_DIR}/ui")
endfunction()

# sf_add_executable(NAME SOURCES ... LIBS ...)
function(sf_add_executable name)
    cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "SOURCES;LIBS")
    if(ARG_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "sf_add_executable(${name}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
    endif()
    qt_add_executable(${name} ${ARG_SOURCES})
    target_link_libraries(${name} PRIVATE starforge_policy ${ARG_LIBS})
    set_target_properties(${name} PROPERTIES CXX_EXTENSIONS OFF)
    install(TARGETS ${name} RUNTIME DESTINATION bin)
endfunction()

# sf_add_test(NAME SOURCES ... LIBS ... LABELS ... [ENVIRONMENT ...] [TIMEOUT s] [WRAPPER cmd...])
# One Qt Test executable per unit, registered with CTest under the given labels
# (unit, gui, integration). WRAPPER runs the test inside another command, e.g. the keyring session.
function(sf_add_test name)
    cmake_parse_arguments(PARSE_ARGV 1 ARG "" "TIMEOUT" "SOURCES;LIBS;LABELS;ENVIRONMENT;WRAPPER")
    if(ARG_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "sf_add_test(${name}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
    endif()
    if(NOT ARG_LABELS)
        message(FATAL_ERROR "sf_add_test(${name}): LABELS is required")
    endif()
    if(NOT ARG_TIMEOUT)
        set(ARG_TIMEOUT 120)
    endif()
    add_executable(${name} ${ARG_SOURCES})
    target_link_libraries(${name} PRIVATE starforge_policy Qt6::Test ${ARG_LIBS})
    target_compile_definitions(${name} PRIVATE
        SF_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/tests/data"
        SF_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
        SF_BIN_DIR="${CMAKE_BINARY_DIR}/bin")
    set_target_properties(${name} PROPERTIES
        CXX_EXTENSIONS OFF
        RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/tests")
    add_test(NAME ${name} COMMAND ${ARG_WRAPPER} $<TARGET_FILE:${name}>)
    set_tests_properties(${name} PROPERTIES
        LABELS "${ARG_LABELS}"
        TIMEOUT ${ARG_TIMEOUT}
        ENVIRONMENT "QT_QPA_PLATFORM=offscreen;${ARG_ENVIRONMENT}")
endfunction()
