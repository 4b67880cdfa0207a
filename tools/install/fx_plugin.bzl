"""fx_plugin: a pass plugin for the fx SDK, built with Bazel out of tree.

Installed as PREFIX/share/fx-sdk/bazel/fx_plugin.bzl; load it from the
@fx_sdk repository that fx_sdk.BUILD (beside it) describes:

    load("@fx_sdk//share/fx-sdk/bazel:fx_plugin.bzl", "fx_plugin")
    fx_plugin(name = "my_pass", srcs = ["my_pass.cc"])

builds libmy_pass.so the way the fx host expects a plugin (as CMake's
fx_add_plugin does): position-independent code, hidden visibility, the version script that exports fx_plugin_get_info alone,
and no undefined symbols (a plugin needs nothing from the host: everything
comes through the FxApi table). It depends on @fx_sdk//:plugin_api only.
The target is tagged "fx_plugin": fx_library (fx_library.bzl) takes only
targets so tagged in its `plugins`.
"""

def fx_plugin(name, srcs, deps = [], copts = [], tags = [], **kwargs):
    """lib<name>.so from srcs; extra deps, copts, tags and cc_binary arguments pass through."""
    version_script = "@fx_sdk//:lib/fx-sdk/fx_plugin.map"
    native.cc_binary(
        name = "lib" + name + ".so",
        srcs = srcs,
        copts = ["-fvisibility=hidden"] + copts,
        linkshared = True,
        additional_linker_inputs = [version_script],
        linkopts = [
            "-Wl,--version-script=$(location " + version_script + ")",
            "-Wl,--no-undefined",
        ],
        deps = ["@fx_sdk//:plugin_api"] + deps,
        tags = ["fx_plugin"] + tags,
        **kwargs
    )
