"""first_party_plugin: how every first-party pass plugin is built.

A shared library from plugin_api/include alone (no fx_core, no LibTorch),
with hidden visibility so that it exports fx_plugin_get_info alone, the
helpers of plugins/common, and the tag "fx_plugin" that fx_library takes
plugins by (tools/bazel/fx_library_core.bzl). The target is a cc_binary
named as its output, libfx_<name>.so, in //plugins, where the fx command's
runfiles find the plugins (fx_sdk/plugins/*.so).
"""

load("@rules_cc//cc:defs.bzl", "cc_binary")

def first_party_plugin(name, srcs, deps = [], **kwargs):
    cc_binary(
        name = name,
        srcs = srcs,
        copts = ["-fvisibility=hidden"],
        linkshared = True,
        tags = ["fx_plugin"],
        deps = ["//plugins:plugin_util"] + deps,
        **kwargs
    )
