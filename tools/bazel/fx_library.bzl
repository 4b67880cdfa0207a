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
  NAME_bundle  `fx run` of the pipeline (the action NAME_optimize): NAME_bundle/graph.fx.json and its
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

Bad input is named by attribute. While Bazel analyses the build: a target
in `plugins` that is not an fx plugin (built with fx_plugin, or first-party:
tagged "fx_plugin"), a file of this package in `graph`, `weights`, `inputs`
or a config `pipeline` that does not exist. While it builds: a pipeline fx
refuses (an unknown pass or named pipeline, a bad option) fails
NAME_optimize (mnemonic FxPipeline) with fx run's message and
"fx_library //PKG:NAME: pipeline 'TEXT': fx run refused it"; a pass that
fails fails it with the pass's error and the path of its reproducer, kept in
/tmp/fx_library_reproducers/PKG/NAME on the machine that ran the action
(fx_library_core.bzl REPRODUCER_ROOT). `pipeline` naming a label or a *.json
file is read as a pipeline config (fx run --config); otherwise it is
pipeline text (fx run --pipeline).

Why tools/bazel: the fx tool and the plugins are built in this tree; the
macro only wraps `fx run` and `fx code`. Its body is fx_library_core.bzl,
which the install ships too: tools/install/fx_library.bzl gives it the
installed fx, plugins and host library (@fx_sdk//share/fx-sdk/bazel:
fx_library.bzl in a workspace on the SDK).
"""

load(":fx_library_core.bzl", "fx_library_core")

def fx_library(name, **kwargs):
    """The targets above, from this tree's fx, codegen support and drivers.

    Args:
      name: the C++ namespace and the cc_library's name.
      **kwargs: graph: the graph: a .fx.json file, or a target whose files
          hold exactly one (its weights among them, or in `weights`).
        pipeline: pipeline text ("O2", "shape_prop,fold_bn") or a JSON
          pipeline config (a label or a file ending in .json).
        plugins: the plugin shared libraries the passes come from (fx_plugin
          targets or first-party //plugins:libfx_*.so); nothing else is loaded.
        weights: the graph's weights file(s) when `graph` is a bare file.
        inputs: a torch.save file of example inputs (one tensor per
          placeholder): given to passes that need them (fx run --inputs) and
          the shapes and dtypes of NAME_test's random inputs.
        absent_modules: module type names (e.g. "BatchNorm2d") NAME_test
          checks the optimised graph no longer calls.
        rtol, atol: NAME_test's tolerances (floats).
        tags: tags of every target; visibility: of NAME and NAME_bundle;
        anything else: further cc_library arguments for NAME.
    """
    fx_library_core(
        name = name,
        fx = "//tools:fx",
        cc_deps = [
            "//fx_core/cppgen:cpp_codegen_support",
            "@system//:torch",
        ],
        test_main = "//tools/bazel:fx_library_test_main",
        benchmark_main = "//tools/bazel:fx_library_benchmark_main",
        **kwargs
    )
