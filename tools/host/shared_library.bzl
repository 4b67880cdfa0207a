"""fx_shared_library: one shared library holding every object of its deps.

cc_binary(linkshared = True) links only the objects something in it refers
to (Bazel passes libraries between --start-lib and --end-lib), which for a
library with no sources of its own is nothing. This rule links the
transitive closure of `deps` whole (--whole-archive on each library's PIC
archive), keeps the deps' link options (-ltorch, ...) so system libraries
stay dynamic dependencies, and adds `linkopts` and the `version_script`.
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")

def _whole(ctx, feature_configuration, cc_toolchain, library):
    """`library` linked whole, or unchanged when it has no archive."""
    if not library.pic_static_library and not library.static_library:
        return library
    return cc_common.create_library_to_link(
        actions = ctx.actions,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        static_library = library.static_library,
        pic_static_library = library.pic_static_library,
        alwayslink = True,
    )

def _fx_shared_library_impl(ctx):
    cc_toolchain = find_cpp_toolchain(ctx)
    feature_configuration = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    merged = cc_common.merge_cc_infos(cc_infos = [d[CcInfo] for d in ctx.attr.deps])
    libraries = []
    flags = []
    for linker_input in merged.linking_context.linker_inputs.to_list():
        flags.extend(linker_input.user_link_flags)
        for library in linker_input.libraries:
            libraries.append(_whole(ctx, feature_configuration, cc_toolchain, library))
    linking_context = cc_common.create_linking_context(
        linker_inputs = depset([cc_common.create_linker_input(
            owner = ctx.label,
            libraries = depset(libraries),
            user_link_flags = depset(flags),
        )]),
    )
    script = ctx.file.version_script
    outputs = cc_common.link(
        actions = ctx.actions,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        linking_contexts = [linking_context],
        name = ctx.attr.library_name,
        output_type = "dynamic_library",
        user_link_flags = ctx.attr.linkopts + [
            "-Wl,--version-script=" + script.path,
            "-Wl,--no-undefined",
        ],
        additional_inputs = [script],
    )
    library = outputs.library_to_link.resolved_symlink_dynamic_library or \
              outputs.library_to_link.dynamic_library
    return [DefaultInfo(files = depset([library]))]

fx_shared_library = rule(
    implementation = _fx_shared_library_impl,
    doc = "lib<library_name>.so: the whole of `deps` as one shared library.",
    attrs = {
        "deps": attr.label_list(providers = [CcInfo]),
        "library_name": attr.string(mandatory = True),
        "linkopts": attr.string_list(),
        "version_script": attr.label(allow_single_file = True, mandatory = True),
        "_cc_toolchain": attr.label(
            default = Label("@bazel_tools//tools/cpp:current_cc_toolchain"),
        ),
    },
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
)

def _fx_headers_impl(ctx):
    headers = []
    for dep in ctx.attr.deps:
        for header in dep[CcInfo].compilation_context.headers.to_list():
            if header.owner.workspace_name == "":
                headers.append(header)
    return [DefaultInfo(files = depset(headers))]

fx_headers = rule(
    implementation = _fx_headers_impl,
    doc = "The headers of this repository (not external ones) that `deps` see.",
    attrs = {"deps": attr.label_list(providers = [CcInfo])},
)
