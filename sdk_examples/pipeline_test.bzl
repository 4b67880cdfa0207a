"""PIPELINE_TEST_DEPS: what an example's test links to run its plugin.

The host side of the examples' tests that load a plugin and run its passes
on a GraphModule through the pipeline: the GraphModule and the executor it
runs with, its file and torch.save formats, the PassManager, pass registry,
pass targets and JSON pipelines, the plugin loader, gtest and LibTorch. The plugins themselves
stay built from plugin_api/include alone.
"""

PIPELINE_TEST_DEPS = [
    "//fx_core/compile:execution_plan",
    "//fx_core/io:torch_save",
    "//fx_core/runtime:graph_module",
    "//fx_core/runtime:graph_module_file",
    "//host/loader:plugin_loader",
    "//host/pipeline:pass_manager",
    "//host/pipeline:pass_registry",
    "//host/pipeline:pass_target",
    "//host/pipeline:pipeline",
    "@system//:gtest_main",
    "@system//:torch",
]
