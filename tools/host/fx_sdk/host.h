// The fx SDK as a library: what a C++ host application includes to trace
// LibTorch modules, run pass pipelines with plugins and run the result.
//
//   #include "fx_sdk/host.h"   // links libfx_host.so (CMake: FxSdk::host,
//                              // pkg-config: fx-host, Bazel: @fx_sdk//:host)
//
// The installed SDK (bazel run //:install -- PREFIX) has the library as
// PREFIX/lib/libfx_host.so and its headers under PREFIX/include/fx-sdk, at
// the paths they have in the source tree ("fx_core/...", "plugin_api/...",
// this file as "fx_sdk/host.h"); the plugin contract stays at
// PREFIX/include/fx/plugin_api.h. LibTorch, Abseil, Boost.Filesystem,
// OpenSSL and oneDNN are not in the library: it loads them from the system
// (Debian's libtorch-dev, libabsl-dev, ...), and a host that includes these
// headers compiles and links against LibTorch and Abseil too (Abseil's
// containers and status types appear in them). The library exports the fx
// namespace alone.
// sdk_examples/host_app (installed as PREFIX/share/fx-sdk/examples/host_app)
// is a complete host.
//
// Stable headers: this file and those it includes below. Within one major
// version of the host library (FX_HOST_VERSION_MAJOR) their names and
// signatures stay source compatible: what compiles against version 1.0
// compiles against 1.x. Every other installed header is there only because
// one of these includes it: it may change in any release, so a host should
// not include it itself.
//
// Versions. Two numbers, independent of each other:
//  - the host library's version FX_HOST_VERSION_MAJOR.MINOR.PATCH: this C++
//    API. The library's file is libfx_host.so.MAJOR.MINOR.PATCH and its
//    SONAME libfx_host.so.MAJOR.MINOR, because a C++ API keeps no binary
//    compatibility across minor versions (a struct that gains a member
//    changes its layout): a host is relinked for each minor version, and
//    the dynamic linker refuses to pair it with another one. A patch
//    version changes no declaration of a stable header.
//  - the plugin ABI version FX_API_VERSION (fx/plugin_api.h): the C
//    function table plugins are built against. It only grows; a plugin of
//    version N loads in every host of version N or later, whatever the host
//    library's version. find_package(FxSdk N) and the pkg-config file
//    fx-plugin name this number; fx-host's pkg-config Version is the host
//    library's.
#ifndef FX_SDK_HOST_H_
#define FX_SDK_HOST_H_

#include <string>

#include "fx_core/capture/make_fx.h"
#include "fx_core/compile/inference_plan.h"
#include "fx_core/format/graph_json.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/interpreter.h"
#include "fx_core/support/error.h"
#include "fx_core/tracer/functions.h"
#include "fx_core/tracer/tracer.h"
#include "host/loader/plugin_discovery.h"
#include "host/pipeline/named_pipelines.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pass_registry.h"
#include "host/pipeline/pass_target.h"
#include "host/pipeline/pipeline.h"
#include "host/pipeline/pipeline_report.h"

#define FX_HOST_VERSION_MAJOR 1
#define FX_HOST_VERSION_MINOR 0
#define FX_HOST_VERSION_PATCH 0

namespace fx::host {

// The version of the library the program runs with, "MAJOR.MINOR.PATCH"
// (the header's FX_HOST_VERSION_* are the version it was compiled against;
// the SONAME makes their major and minor versions agree).
std::string library_version();

// The first-party plugin directory of the install this library belongs to:
// lib/fx-sdk/plugins beside the directory that holds libfx_host.so
// (PREFIX/lib/fx-sdk/plugins), or empty when there is none (a library not
// run from an install). Hand it to PluginSources::plugin_dirs: the default
// directories (plugin_discovery.h) are found from the executable, which a
// host application keeps elsewhere.
std::string installed_plugin_dir();

}  // namespace fx::host

#endif  // FX_SDK_HOST_H_
