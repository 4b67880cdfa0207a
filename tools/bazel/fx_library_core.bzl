"""The body of fx_library, shared by the tree and the install.

fx_library.bzl (here, for this tree) and tools/install/fx_library.bzl
(PREFIX/share/fx-sdk/bazel/fx_library.bzl, for a workspace on the installed
SDK) differ only in where the fx tool, the C++ support library and the
NAME_test / NAME_benchmark drivers come from; both call fx_library_core with
those labels. fx_library.bzl documents the targets and the attributes.

Plugins are checked by a marker: a target is an fx plugin when it carries
the tag "fx_plugin" (fx_plugin.bzl's macro adds it, and so do the first-party
plugins' targets, in the tree and in the install's fx_sdk.BUILD). Anything
else given in `plugins` (a cc_library, a bare .so file, a filegroup) is
refused while Bazel analyses the build, naming the attribute.
"""

load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_library", "cc_test")

# The tag that makes a target an fx plugin for fx_library.
FX_PLUGIN_TAG = "fx_plugin"

# Where a failing pipeline's reproducer is kept on the machine that ran the
# action (the action's own copy goes with its sandbox): one directory per
# fx_library target, replaced by the next failure.
REPRODUCER_ROOT = "/tmp/fx_library_reproducers"

_FxPluginMarkInfo = provider(
    doc = "Whether a target in fx_library's plugins is an fx plugin.",
    fields = {"is_fx_plugin": "the target is tagged fx_plugin"},
)

def _fx_plugin_mark_impl(target, ctx):
    return [_FxPluginMarkInfo(is_fx_plugin = FX_PLUGIN_TAG in ctx.rule.attr.tags)]

_fx_plugin_mark = aspect(implementation = _fx_plugin_mark_impl)

def _plugin_file(ctx, plugin):
    """The one shared library of `plugin`, which must be an fx plugin."""
    mark = plugin[_FxPluginMarkInfo] if _FxPluginMarkInfo in plugin else None
    if not mark or not mark.is_fx_plugin:
        fail(("fx_library %s: plugins: %s is not an fx_plugin (give targets " +
              "built with fx_plugin from fx_plugin.bzl, or first-party plugins " +
              "such as @fx_sdk//:libfx_passes.so)") % (ctx.attr.library, plugin.label), attr = "plugins")
    files = plugin.files.to_list()
    if len(files) != 1 or not files[0].basename.endswith(".so"):
        fail("fx_library %s: plugins: %s gives %d files, not one shared library" %
             (ctx.attr.library, plugin.label, len(files)), attr = "plugins")
    return files[0]

def _graph_file(ctx):
    """The one .fx.json among the graph target's files."""
    found = [f for f in ctx.files.graph if f.basename.endswith(".fx.json")]
    if len(found) != 1:
        fail("fx_library %s: graph: %s holds %d .fx.json files, not one" %
             (ctx.attr.library, ctx.attr.graph.label, len(found)), attr = "graph")
    return found[0]

# The pipeline action: fx run with exactly the declared plugins. On failure it
# keeps the reproducer fx wrote (when a pass failed) and prints where.
_RUN_PIPELINE = """
fx=$1; out=$2; weights=$3; who=$4; what=$5; keep=$6; shift 6
set -u
repro="$out.reproducer"
rm -rf "$repro"
status=0
env -u FX_PLUGIN_PATH "$fx" run --no-default-plugins --reproducer-dir "$repro" -o "$out" "$@" || status=$?
if [ "$status" -eq 0 ]; then
  rm -rf "$repro"
  [ -f "$weights" ] || : >"$weights"
  exit 0
fi
if [ -n "$(ls -A "$repro" 2>/dev/null)" ]; then
  rm -rf "$keep" && mkdir -p "$keep" && cp -r "$repro"/. "$keep"/ &&
    echo "fx_library $who: pipeline $what failed (fx run exit $status); reproducer: $keep" >&2 ||
    echo "fx_library $who: pipeline $what failed (fx run exit $status); its reproducer could not be kept in $keep" >&2
else
  echo "fx_library $who: pipeline $what: fx run refused it (exit $status, its message above)" >&2
fi
rm -rf "$repro"
exit 1
"""

def _fx_pipeline_impl(ctx):
    plugins = [_plugin_file(ctx, p) for p in ctx.attr.plugins]
    graph = _graph_file(ctx)
    bundle = ctx.outputs.bundle
    weights = ctx.outputs.bundle_weights
    args = ctx.actions.args()
    args.add_all([ctx.executable.fx, bundle, weights, ctx.attr.library])
    if ctx.file.config:
        args.add("config " + ctx.file.config.short_path)
    else:
        args.add("'%s'" % ctx.attr.pipeline)
    args.add("%s/%s/%s" % (REPRODUCER_ROOT, ctx.label.package or "_", ctx.attr.library.split(":")[-1]))
    for p in plugins:
        args.add_all(["--plugin", p])
    inputs = [graph] + plugins + ctx.files.graph + ctx.files.weights
    if ctx.file.config:
        args.add_all(["--config", ctx.file.config])
        inputs.append(ctx.file.config)
    else:
        args.add_all(["--pipeline", ctx.attr.pipeline])
    if ctx.file.inputs:
        args.add_all(["--inputs", ctx.file.inputs])
        inputs.append(ctx.file.inputs)
    args.add(graph)
    ctx.actions.run_shell(
        command = _RUN_PIPELINE,
        arguments = [args],
        inputs = depset(inputs),
        tools = [ctx.attr.fx[DefaultInfo].files_to_run],
        outputs = [bundle, weights],
        mnemonic = "FxPipeline",
        progress_message = "fx_library %s: running the pipeline" % ctx.attr.library,
    )
    return [DefaultInfo(files = depset([bundle, weights]))]

_fx_pipeline = rule(
    implementation = _fx_pipeline_impl,
    doc = "fx run of a pipeline: NAME_bundle/graph.fx.json and model.weights.pt.",
    attrs = {
        "library": attr.string(mandatory = True, doc = "the fx_library's label, for messages"),
        "bundle": attr.output(mandatory = True),
        "bundle_weights": attr.output(mandatory = True),
        "graph": attr.label(mandatory = True, allow_files = True),
        "weights": attr.label_list(allow_files = True),
        "plugins": attr.label_list(mandatory = True, allow_files = True, aspects = [_fx_plugin_mark]),
        "pipeline": attr.string(),
        "config": attr.label(allow_single_file = True),
        "inputs": attr.label(allow_single_file = True),
        # The host configuration, as the genrules below use it: one fx build.
        "fx": attr.label(mandatory = True, executable = True, allow_files = True, cfg = "host"),
    },
)

def _is_config(pipeline):
    return pipeline.startswith(":") or pipeline.startswith("//") or \
           pipeline.startswith("@") or pipeline.endswith(".json")

def _check_file(label, attr, value):
    """Fails naming `attr` when `value`, a file of this package, is missing."""
    if value.startswith("//") or value.startswith("@"):
        return  # another package: Bazel names it if it is missing
    path = value[1:] if value.startswith(":") else value
    if native.existing_rule(path) or native.glob([path]):
        return
    fail("fx_library %s: %s: no file or target '%s' in package '%s'" %
         (label, attr, path, native.package_name()))

def fx_library_core(
        name,
        graph,
        pipeline,
        plugins,
        fx,
        cc_deps,
        test_main,
        benchmark_main,
        weights = [],
        inputs = None,
        absent_modules = [],
        rtol = 1e-4,
        atol = 1e-5,
        tags = [],
        visibility = None,
        **kwargs):
    """fx_library (fx_library.bzl) with its tool and libraries given.

    Args:
      name, graph, pipeline, plugins, weights, inputs, absent_modules, rtol,
        atol, tags, visibility, kwargs: fx_library's (fx_library.bzl).
      fx: the fx tool's label.
      cc_deps: what the generated C++ links (the codegen support, LibTorch).
      test_main: the cc_library with NAME_test's main.
      benchmark_main: the cc_library with NAME_benchmark's main.
    """
    if not plugins:
        fail("fx_library %s: plugins: give the plugin libraries the pipeline's passes come from (no plugin is found any other way)" % name)
    if type(pipeline) != "string" or not pipeline:
        fail("fx_library %s: pipeline: pipeline text (\"O2\", \"shape_prop,fold_bn\") or a JSON config label" % name)
    for a, v in [("rtol", rtol), ("atol", atol)]:
        if type(v) != "float" or v < 0:
            fail("fx_library %s: %s: a non-negative float, got %r" % (name, a, v))
    label = "//%s:%s" % (native.package_name(), name)
    _check_file(label, "graph", graph)
    for w in weights:
        _check_file(label, "weights", w)
    if inputs:
        _check_file(label, "inputs", inputs)
    config = pipeline if _is_config(pipeline) else None
    if config:
        _check_file(label, "pipeline", config)

    bundle = name + "_bundle/graph.fx.json"
    bundle_weights = name + "_bundle/model.weights.pt"
    _fx_pipeline(
        name = name + "_optimize",
        library = label,
        bundle = bundle,
        bundle_weights = bundle_weights,
        graph = graph,
        weights = weights,
        plugins = plugins,
        pipeline = "" if config else pipeline,
        config = config,
        inputs = inputs,
        fx = fx,
        tags = tags,
        visibility = visibility,
    )
    native.filegroup(
        name = name + "_bundle",
        srcs = [":" + name + "_optimize"],
        tags = tags,
        visibility = visibility,
    )

    # The generated C++, and run() over it: as many tensors as the optimised
    # graph has placeholders.
    native.genrule(
        name = name + "_cpp",
        srcs = [bundle, bundle_weights],
        outs = [name + "_forward.cc", name + "_run.cc", name + ".h"],
        cmd = (
            "$(location {fx}) code --lang=cpp --name={ns} $(location {b}) > $(location {ns}_forward.cc) && " +
            "n=$$($(location {fx}) print $(location {b}) | grep -c 'placeholder\\[') ; " +
            "args=; decl=; i=0; while [ $$i -lt $$n ]; do " +
            "args=\"$$args, inputs[$$i]\"; decl=\"$$decl, at::Tensor\"; i=$$((i+1)); done; " +
            "{{ echo '// {ns}: the fx graph {g} after the pipeline {p} (fx_library).'; " +
            "echo '// Generated; edit the fx_library target, not this file.'; " +
            "echo '#ifndef FX_LIBRARY_{ns}_H_'; echo '#define FX_LIBRARY_{ns}_H_'; " +
            "echo '#include <ATen/ATen.h>'; echo '#include <ATen/core/ivalue.h>'; " +
            "echo '#include <torch/nn/module.h>'; echo '#include <vector>'; " +
            "echo 'namespace {ns} {{'; " +
            "echo '// The optimised bundle, relative to the runfiles root (fx_sdk/...).'; " +
            "echo 'inline constexpr const char* kBundle = \"$(rootpath {b})\";'; " +
            "echo \"// The graph's placeholders, in order.\"; " +
            "echo \"inline constexpr size_t kNumInputs = $$n;\"; " +
            "echo '// The optimised graph on inputs (kNumInputs tensors; otherwise'; " +
            "echo '// std::invalid_argument); self: the bundle read by fx::read_graph_module.'; " +
            "echo 'c10::IValue run(torch::nn::Module& self, const std::vector<at::Tensor>& inputs);'; " +
            "echo '}}  // namespace {ns}'; echo '#endif'; }} > $(location {ns}.h) && " +
            "{{ echo '#include \"$(rootpath {ns}.h)\"'; echo '#include <stdexcept>'; echo '#include <string>'; " +
            "echo 'namespace {ns} {{'; " +
            "echo \"c10::IValue forward(torch::nn::Module& self$$decl);\"; " +
            "echo 'c10::IValue run(torch::nn::Module& self, const std::vector<at::Tensor>& inputs) {{'; " +
            "echo '  if (inputs.size() != kNumInputs) throw std::invalid_argument(\"{ns}::run: \" + std::to_string(kNumInputs) + \" inputs expected, got \" + std::to_string(inputs.size()));'; " +
            "echo \"  return forward(self$$args);\"; echo '}}'; echo '}}  // namespace {ns}'; }} > $(location {ns}_run.cc)"
        ).format(fx = fx, ns = name, b = bundle, g = graph, p = pipeline.replace("'", "")),
        tools = [fx],
        tags = tags,
    )
    cc_library(
        name = name,
        srcs = [name + "_forward.cc", name + "_run.cc"],
        hdrs = [name + ".h"],
        data = [":" + name + "_bundle"],
        deps = cc_deps,
        tags = tags,
        visibility = visibility,
        **kwargs
    )

    if not inputs:
        # NAME_test draws its random inputs like the example inputs.
        return

    # NAME_test: the driver (fx_library_test_main.cc) calls
    # fx::library_test::run_generated, defined here for this library alone.
    native.genrule(
        name = name + "_test_entry",
        outs = [name + "_test_entry.cc"],
        cmd = ("{{ echo '#include \"$(rootpath {ns}.h)\"'; " +
               "echo 'namespace fx::library_test {{'; " +
               "echo 'c10::IValue run_generated(torch::nn::Module& self, const std::vector<at::Tensor>& inputs) {{ return {ns}::run(self, inputs); }}'; " +
               "echo '}}'; }} > $@").format(ns = name),
        srcs = [name + ".h"],
        tags = tags,
    )
    test_args = [
        "--optimized=$(rootpath %s)" % bundle,
        "--rtol=%r" % rtol,
        "--atol=%r" % atol,
    ] + ["--absent=" + m for m in absent_modules]
    test_data = [graph, bundle, bundle_weights] + weights
    test_args.append("--inputs=$(rootpath %s)" % inputs)
    test_data.append(inputs)

    # Last: the graph target's files (the driver takes the .fx.json).
    test_args.append("$(rootpaths %s)" % graph)
    cc_test(
        name = name + "_test",
        size = "small",
        srcs = [name + "_test_entry.cc"],
        args = test_args,
        data = test_data,
        deps = [":" + name, test_main],
        tags = tags,
    )
    cc_binary(
        name = name + "_benchmark",
        testonly = True,
        srcs = [name + "_test_entry.cc"],
        args = test_args,
        data = test_data,
        deps = [":" + name, benchmark_main],
        tags = tags,
    )
