"""fx_library on the installed SDK: a graph through a pipeline, as a build.

Installed as PREFIX/share/fx-sdk/bazel/fx_library.bzl; load it from the
@fx_sdk repository that fx_sdk.BUILD describes:

    load("@fx_sdk//share/fx-sdk/bazel:fx_library.bzl", "fx_library")

    fx_library(
        name = "conv_bn",
        graph = "model/graph.fx.json",
        weights = ["model/model.weights.pt"],
        inputs = "model/input.pt",
        pipeline = "shape_prop,fold_bn,dce",     # or "O2", or "my_pipeline.json"
        plugins = [
            "@fx_sdk//:libfx_passes.so",         # the installed plugins
            "@fx_sdk//:libfx_shape_prop.so",
            ":libmy_pass.so",                    # yours, from fx_plugin
        ],
    )

The targets (NAME_bundle, NAME, NAME_test, NAME_benchmark), the attributes
and what bad input gives are those of the SDK's in-tree fx_library
(fx_library_core.bzl, beside this file, is its body). Here the pipeline runs
the installed bin/fx (@fx_sdk//:fx), and the generated C++ and the drivers
link the installed host library (@fx_sdk//:host, lib/libfx_host.so and
include/fx-sdk) and the system's LibTorch. The share/fx-sdk/fx_library_template
directory is a workspace to start from.
"""

load(":fx_library_core.bzl", "fx_library_core")

def fx_library(name, **kwargs):
    """fx_library_core with the installed fx, host library and drivers."""
    fx_library_core(
        name = name,
        fx = "@fx_sdk//:fx",
        cc_deps = ["@fx_sdk//:host"],
        test_main = "@fx_sdk//share/fx-sdk/bazel:fx_library_test_main",
        benchmark_main = "@fx_sdk//share/fx-sdk/bazel:fx_library_benchmark_main",
        **kwargs
    )
