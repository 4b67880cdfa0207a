"""fx_library: a graph bundle through a pipeline of plugin passes, as a build.

In the spirit of TensorFlow's tf_library (tfcompile.bzl): a graph and a
pipeline in, a C++ library (and its test) out, every step an ordinary build
action that Bazel caches.

    load("//tools/bazel:fx_library.bzl", "fx_library")

    fx_library(
        name = "conv_bn",
        graph = "testdata/conv_bn/graph.fx.json",
        weights = ["testdata/conv_bn/model.weights.pt"],
        pipeline = "shape_prop,fold_bn,dce",   # or "O2", or "my_config.json"
        plugins = ["//plugins:libfx_shape_prop.so", ...],
        inputs = "testdata/conv_bn/input.pt",
    )

Targets:
  NAME_bundle  `fx run` of the pipeline: NAME_bundle/graph.fx.json and its
               weights NAME_bundle/model.weights.pt (an empty file when the
               optimised graph has no parameters).
  NAME         a cc_library: the optimised graph's C++ (`fx code --lang=cpp
               --name=NAME`) and NAME.h, which declares
                   c10::IValue NAME::run(torch::nn::Module& self,
                                         const std::vector<at::Tensor>& inputs);
               (self: the optimised bundle read by fx::read_graph_module;
               NAME::kBundle is its runfiles path, a data dependency).
  NAME_test    (when `inputs` is given) a cc_test: on random inputs shaped like `inputs` (3 draws),
               the unoptimised graph's GraphModule, the optimised bundle's
               and NAME::run agree (rtol, atol); each module type named in
               `absent_modules` no longer appears in the optimised graph.
  NAME_benchmark  (with `inputs`) a cc_binary (`bazel run`): the median
               time of the unoptimised GraphModule, the optimised one and
               NAME::run on random inputs shaped like `inputs`.

Hermetic: the fx tool runs with --no-default-plugins and loads exactly the
`plugins` given (by label, as --plugin PATH), never $FX_PLUGIN_PATH or the
first-party directory beside it; it reads only the declared graph, weights,
inputs and config. The same graph, pipeline and plugins give byte-identical
outputs (tests/tools/fx_library/deterministic_test.sh).

A pipeline that fails (an unknown pass or named pipeline, a pass's error)
fails NAME_bundle's action, and Bazel prints fx run's message (the pass and
its error). `pipeline` naming a label or a *.json file is read as a pipeline
config (fx run --config); otherwise it is pipeline text (fx run --pipeline).

Why tools/bazel: the fx tool and the plugins are built in this tree; the
macro only wraps `fx run` and `fx code`, like tools/install/fx_plugin.bzl
wraps the plugin build for out-of-tree users.
"""

load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_library", "cc_test")

_FX = "//tools:fx"

def _is_config(pipeline):
    return pipeline.startswith(":") or pipeline.startswith("//") or \
           pipeline.startswith("@") or pipeline.endswith(".json")

def fx_library(
        name,
        graph,
        pipeline,
        plugins,
        weights = [],
        inputs = None,
        absent_modules = [],
        rtol = 1e-4,
        atol = 1e-5,
        tags = [],
        visibility = None,
        **kwargs):
    """The targets above; kwargs pass through to the cc_library NAME.

    Args:
      name: the C++ namespace and the cc_library's name.
      graph: the graph: a .fx.json file, or a target whose files hold
        exactly one (its weights among them, or in `weights`).
      pipeline: pipeline text ("O2", "shape_prop,fold_bn") or a JSON
        pipeline config (a label or a file ending in .json).
      plugins: the plugin shared libraries the passes come from (labels of
        fx_plugin or first-party libfx_*.so targets); nothing else is loaded.
      weights: the graph's weights file(s) when `graph` is a bare file.
      inputs: a torch.save file of example inputs (one tensor per
        placeholder): given to passes that need them (fx run --inputs) and
        the shapes and dtypes of NAME_test's random inputs.
      absent_modules: module type names (e.g. "BatchNorm2d") NAME_test
        checks the optimised graph no longer calls.
      rtol: NAME_test's relative tolerance.
      atol: NAME_test's absolute tolerance.
      tags: tags of every target.
      visibility: visibility of NAME and NAME_bundle.
      **kwargs: further cc_library arguments for NAME.
    """
    if not plugins:
        fail("fx_library %s: plugins: give the plugin libraries the pipeline's passes come from (no plugin is found any other way)" % name)
    if type(pipeline) != "string" or not pipeline:
        fail("fx_library %s: pipeline: pipeline text (\"O2\", \"shape_prop,fold_bn\") or a JSON config label" % name)
    for a, v in [("rtol", rtol), ("atol", atol)]:
        if type(v) != "float" or v < 0:
            fail("fx_library %s: %s: a non-negative float, got %r" % (name, a, v))

    bundle = name + "_bundle/graph.fx.json"
    bundle_weights = name + "_bundle/model.weights.pt"
    plugin_flags = " ".join(["--plugin $(location %s)" % p for p in plugins])
    srcs = [graph] + weights + plugins
    if _is_config(pipeline):
        pipeline_flag = "--config $(location %s)" % pipeline
        srcs.append(pipeline)
    else:
        pipeline_flag = "--pipeline '%s'" % pipeline
    inputs_flag = ""
    if inputs:
        inputs_flag = "--inputs $(location %s)" % inputs
        srcs.append(inputs)

    # The one *.fx.json among the graph target's files.
    find_graph = ("g=; for f in $(locations %s); do case $$f in *.fx.json) " +
                  "[ -z \"$$g\" ] || { echo \"fx_library %s: graph: more than " +
                  "one .fx.json in %s\" >&2; exit 1; }; g=$$f;; esac; done; " +
                  "[ -n \"$$g\" ] || { echo \"fx_library %s: graph: no .fx.json " +
                  "file in %s\" >&2; exit 1; }; ") % (graph, name, graph, name, graph)
    native.genrule(
        name = name + "_optimize",
        srcs = srcs,
        outs = [bundle, bundle_weights],
        cmd = (find_graph +
               "out=$(location %s); w=$(location %s); " % (bundle, bundle_weights) +
               "env -u FX_PLUGIN_PATH $(location %s) run --no-default-plugins " % _FX +
               "%s %s %s -o $$out $$g || exit 1; " % (plugin_flags, pipeline_flag, inputs_flag) +
               "[ -f $$w ] || : > $$w"),
        tools = [_FX],
        message = "fx_library %s: running the pipeline" % name,
        tags = tags,
        visibility = visibility,
    )
    native.filegroup(
        name = name + "_bundle",
        srcs = [bundle, bundle_weights],
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
        ).format(fx = _FX, ns = name, b = bundle, g = graph, p = pipeline.replace("'", "")),
        tools = [_FX],
        tags = tags,
    )
    cc_library(
        name = name,
        srcs = [name + "_forward.cc", name + "_run.cc"],
        hdrs = [name + ".h"],
        data = [":" + name + "_bundle"],
        deps = [
            "//fx_core/cppgen:cpp_codegen_support",
            "@system//:torch",
        ],
        tags = tags,
        visibility = visibility,
        **kwargs
    )

    if not inputs:
        # NAME_test draws its random inputs like the example inputs.
        return

    # NAME_test: the driver (tools/bazel/fx_library_test_main.cc) calls
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
        deps = [
            ":" + name,
            "//tools/bazel:fx_library_test_main",
        ],
        tags = tags,
    )
    cc_binary(
        name = name + "_benchmark",
        testonly = True,
        srcs = [name + "_test_entry.cc"],
        args = test_args,
        data = test_data,
        deps = [
            ":" + name,
            "//tools/bazel:fx_library_benchmark_main",
        ],
        tags = tags,
    )
