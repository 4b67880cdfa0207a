# FxSdkConfig.cmake: the fx SDK for plugin authors, find_package(FxSdk).
#
# Installed by `bazel run //:install -- PREFIX` into PREFIX/lib/cmake/FxSdk;
# the prefix is found from this file's location, so the tree is relocatable.
# Point CMake at it with -DCMAKE_PREFIX_PATH=PREFIX (or -DFxSdk_DIR=...).
#
# Provides
#   FxSdk::plugin_api   INTERFACE target: the plugin contract's include
#                       directory (fx/plugin_api.h, the C++ wrapper
#                       fx/plugin_api.hpp, dlpack/dlpack.h). A plugin links
#                       nothing else of the SDK: no fx_core, no LibTorch.
#   FxSdk::fx           IMPORTED executable: PREFIX/bin/fx, to run passes in
#                       tests (fx run FILE --plugin $<TARGET_FILE:p> ...).
#   FxSdk::host         with COMPONENTS host, find_package(FxSdk REQUIRED
#                       COMPONENTS host): IMPORTED shared library, the SDK as
#                       a C++ library for host applications (libfx_host.so,
#                       #include "fx_sdk/host.h"): its include directories
#                       (PREFIX/include/fx-sdk and PREFIX/include), C++17,
#                       and LibTorch (find_package(Torch): Debian's
#                       libtorch-dev) and Abseil (find_package(absl):
#                       libabsl-dev) as interface dependencies, which the
#                       headers use. Only this component looks for them, so
#                       a plugin project needs neither. FX_HOST_VERSION is
#                       the library's version (fx_sdk/host.h says how
#                       versions are named); the example application is in
#                       PREFIX/share/fx-sdk/examples/host_app.
#   FX_EXECUTABLE, FX_PLUGIN_DIR (first-party plugins), FX_API_VERSION,
#   FxSdk_INCLUDE_DIR, FxSdk_PREFIX
#   fx_add_plugin(NAME SOURCES src... [LINK_LIBRARIES lib...])
#       builds lib<NAME>.so, a module library with the flags a plugin needs:
#       C++17 (C99 for C sources), position-independent code, hidden
#       visibility, a version script exporting fx_plugin_get_info alone, and
#       no undefined symbols (a plugin needs nothing from the host's symbols:
#       everything comes through the FxApi table); optimised (-O2) when the
#       project sets no CMAKE_BUILD_TYPE (CMake's default is no flags at all).
get_filename_component(FxSdk_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(FxSdk_INCLUDE_DIR "${FxSdk_PREFIX}/include")
set(FX_EXECUTABLE "${FxSdk_PREFIX}/bin/fx")
set(FX_PLUGIN_DIR "${FxSdk_PREFIX}/lib/fx-sdk/plugins")
set(FX_PLUGIN_VERSION_SCRIPT "${FxSdk_PREFIX}/lib/fx-sdk/fx_plugin.map")

file(STRINGS "${FxSdk_INCLUDE_DIR}/fx/plugin_api.h" _fx_api_line
     REGEX "^#define FX_API_VERSION [0-9]+")
string(REGEX REPLACE "^#define FX_API_VERSION ([0-9]+).*" "\\1" FX_API_VERSION
       "${_fx_api_line}")
unset(_fx_api_line)

if(NOT TARGET FxSdk::plugin_api)
  add_library(FxSdk::plugin_api INTERFACE IMPORTED)
  set_target_properties(FxSdk::plugin_api PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${FxSdk_INCLUDE_DIR}")
endif()

if(NOT TARGET FxSdk::fx AND EXISTS "${FX_EXECUTABLE}")
  add_executable(FxSdk::fx IMPORTED)
  set_target_properties(FxSdk::fx PROPERTIES IMPORTED_LOCATION "${FX_EXECUTABLE}")
endif()

# FxSdk::host, when the host component is asked for.
function(_fx_sdk_host_target)
  set(header "${FxSdk_PREFIX}/include/fx-sdk/fx_sdk/host.h")
  if(NOT EXISTS "${header}")
    set(FxSdk_host_NOT_FOUND_MESSAGE "no ${header}" PARENT_SCOPE)
    return()
  endif()
  foreach(part MAJOR MINOR PATCH)
    file(STRINGS "${header}" line REGEX "^#define FX_HOST_VERSION_${part} [0-9]+")
    string(REGEX REPLACE "^#define FX_HOST_VERSION_${part} ([0-9]+).*" "\\1"
           ${part} "${line}")
  endforeach()
  set(FX_HOST_VERSION "${MAJOR}.${MINOR}.${PATCH}" PARENT_SCOPE)
  set(library "${FxSdk_PREFIX}/lib/libfx_host.so.${MAJOR}.${MINOR}.${PATCH}")
  if(NOT EXISTS "${library}")
    set(FxSdk_host_NOT_FOUND_MESSAGE "no ${library}" PARENT_SCOPE)
    return()
  endif()
  find_package(Torch QUIET)
  find_package(absl QUIET)
  if(NOT TARGET torch OR NOT TARGET absl::statusor)
    set(FxSdk_host_NOT_FOUND_MESSAGE
        "FxSdk::host needs LibTorch (find_package(Torch), Debian's libtorch-dev) and Abseil (find_package(absl), libabsl-dev)"
        PARENT_SCOPE)
    return()
  endif()
  add_library(FxSdk::host SHARED IMPORTED)
  set_target_properties(FxSdk::host PROPERTIES
    IMPORTED_LOCATION "${library}"
    IMPORTED_SONAME "libfx_host.so.${MAJOR}.${MINOR}"
    INTERFACE_INCLUDE_DIRECTORIES "${FxSdk_PREFIX}/include/fx-sdk;${FxSdk_INCLUDE_DIR}"
    INTERFACE_COMPILE_FEATURES cxx_std_17
    INTERFACE_LINK_LIBRARIES
      "torch;absl::status;absl::statusor;absl::flat_hash_map;absl::flat_hash_set")
  set(FxSdk_host_FOUND TRUE PARENT_SCOPE)
endfunction()

function(fx_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "SOURCES;LINK_LIBRARIES")
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "fx_add_plugin(${name}): no SOURCES")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "fx_add_plugin(${name}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  add_library(${name} MODULE ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE FxSdk::plugin_api ${ARG_LINK_LIBRARIES})
  set_target_properties(${name} PROPERTIES
    PREFIX "lib"
    CXX_STANDARD 17
    CXX_STANDARD_REQUIRED ON
    CXX_EXTENSIONS OFF
    C_STANDARD 99
    C_STANDARD_REQUIRED ON
    POSITION_INDEPENDENT_CODE ON
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  get_property(_fx_multi_config GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  if(NOT _fx_multi_config AND NOT CMAKE_BUILD_TYPE)
    target_compile_options(${name} PRIVATE -O2)
  endif()
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    target_link_options(${name} PRIVATE
      "LINKER:--version-script=${FX_PLUGIN_VERSION_SCRIPT}"
      "LINKER:--no-undefined")
    set_property(TARGET ${name} APPEND PROPERTY LINK_DEPENDS "${FX_PLUGIN_VERSION_SCRIPT}")
  endif()
endfunction()

set(FxSdk_FOUND TRUE)
foreach(_fx_component IN LISTS FxSdk_FIND_COMPONENTS)
  if(_fx_component STREQUAL "host")
    if(NOT TARGET FxSdk::host)
      _fx_sdk_host_target()
    else()
      set(FxSdk_host_FOUND TRUE)
    endif()
  else()
    set(FxSdk_${_fx_component}_NOT_FOUND_MESSAGE "no such component (the one there is: host)")
  endif()
  if(NOT FxSdk_${_fx_component}_FOUND AND FxSdk_FIND_REQUIRED_${_fx_component})
    set(FxSdk_FOUND FALSE)
    set(FxSdk_NOT_FOUND_MESSAGE "FxSdk component ${_fx_component}: ${FxSdk_${_fx_component}_NOT_FOUND_MESSAGE}")
  endif()
endforeach()
unset(_fx_component)
