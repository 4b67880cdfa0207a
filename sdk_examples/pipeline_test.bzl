"""PIPELINE_TEST_DEPS: what an example's test links to run its plugin.

The host side of the examples' tests that load a plugin and run its passes
on a GraphModule through the pipeline: the GraphModule and its file and
torch.save formats, the PassManager, pass registry, pass targets and JSON
pipelines, the plugin loader, gtest and LibTorch. The plugins themselves
stay built from plugin_api/include alone.
"""

PIPELINE_TEST_DEPS = [
    "//fx_core/runtime:graph_module",
    "//fx_core/runtime:graph_module_file",
    "//fx_core/io:torch_save",
    "//plugin_api/pipeline:pass_manager",
    "//plugin_api/pipeline:pass_registry",
    "//plugin_api/pipeline:pass_target",
    "//plugin_api/pipeline:pipeline",
    "//plugin_api/loader:plugin_loader",
    "@system//:gtest_main",
    "@system//:torch",
]
