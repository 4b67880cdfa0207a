// The version negotiation of plugin_api.h on real binaries: plugins built
// against the first and the second release of version 1 (frozen in
// released/) load, run and reach exactly the functions they were compiled
// for; the table each release's plugins are handed holds, at every offset
// of that release's header, the entry of that name; a plugin built against
// a newer header is handed
// this host's table and read at the struct sizes it declares; a plugin that
// needs a newer host is refused before any of its code runs; the C++
// wrapper checks the table's version before newer entries.
#include <ATen/DLConvertor.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/op_registry.h"
#include "host/capi/c_api.h"
#include "host/capi/extensions.h"
#include "host/loader/plugin_loader.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pass_registry.h"
#include "tests/testing/status_matchers.h"

namespace fx::host {
namespace {

using ::fx::testing::error_of;

const std::string kDir = "tests/plugin_api/abi/plugins/";

PipelineReport run_pipeline(const PassRegistry& registry,
                            const std::string& text, PassTarget& target) {
  auto spec = parse_pipeline_text(text);
  EXPECT_TRUE(spec.ok()) << spec.status();
  auto pm = PassManager::create(registry, *std::move(spec));
  EXPECT_TRUE(pm.ok()) << pm.status();
  return pm->run(target);
}

int64_t int_meta(const Node& n, const std::string& key) {
  const Argument* value = n.meta_value(key);
  return value ? value->as_int() : -1;
}

// x -> relu -> first_release.affine(relu, 3, shift=0.5) -> output: the
// plugin's registration reaches RegisterCustomOp and RegisterLeafModuleRule
// and its kernel every Call* entry, all at the slots the first release had
// them in (where the current table has other entries).
TEST(AbiCompat, AFirstReleasePluginReachesTheFunctionsItWasBuiltFor) {
  auto plugin = load_plugin(kDir + "libfirst_release_plugin.so");
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  EXPECT_EQ((*plugin)->info().api_version, 1u);
  PassRegistry registry;
  ASSERT_TRUE(registry.add(*plugin).ok());
  EXPECT_NE(
      OpRegistry::global().find(Opcode::kCallFunction, "first_release.affine"),
      nullptr);
  EXPECT_EQ(leaf_module_rule("first_release.Block", "block"),
            std::optional<bool>(true));

  auto graph = std::make_unique<Graph>();
  Node* x = graph->placeholder("x");
  Node* relu = graph->call_function("torch.relu", {x});
  Node* shifted =
      graph->call_function("first_release.affine", {relu, Argument(int64_t{3})},
                           {{"shift", Argument(0.5)}});
  Node* scaled = graph->call_function("first_release.affine",
                                      {shifted, Argument(int64_t{2})});
  graph->output(scaled);
  GraphModule gm(GraphModule::AttributeMap{}, std::move(graph));
  torch::Tensor in = torch::randn({2, 3});
  torch::Tensor want = (torch::relu(in) * 3 + 0.5) * 2;
  EXPECT_TRUE(torch::allclose(gm.forward({in}).toTensor(), want));
  // The shape function (CallTensorMeta) on meta tensors.
  auto alone = std::make_unique<Graph>();
  alone->output(alone->call_function(
      "first_release.affine", {alone->placeholder("x"), Argument(int64_t{2})}));
  GraphModule on_meta(GraphModule::AttributeMap{}, std::move(alone));
  torch::Tensor meta = on_meta.forward({in.to(torch::kMeta)}).toTensor();
  EXPECT_TRUE(meta.is_meta());
  EXPECT_EQ(meta.sizes(), in.sizes());

  GraphModuleTarget target(gm, {in});
  PipelineReport report = run_pipeline(registry, "first_release_mark", target);
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_EQ(relu->target(), "torch.sigmoid");
  EXPECT_EQ(int_meta(*x, "first_release_users"), 1);
  EXPECT_TRUE(torch::allclose(gm.forward({in}).toTensor(),
                              (torch::sigmoid(in) * 3 + 0.5) * 2));
}

// x -> relu -> v1_plugin.identity -> output, on the second release's
// plugin's custom op (whose registration and kernel also create and release
// graphs through slots 102 and 103 while a registrar or call is live); the
// v1 pass renames relu to sigmoid.
TEST(AbiCompat, AVersionOnePluginBinaryLoadsAndRunsOnThisHost) {
  auto plugin = load_plugin(kDir + "libv1_plugin.so");
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  EXPECT_EQ((*plugin)->info().api_version, 1u);
  PassRegistry registry;
  ASSERT_TRUE(registry.add(*plugin).ok());  // registers with a v1 table
  EXPECT_NE(
      OpRegistry::global().find(Opcode::kCallFunction, "v1_plugin.identity"),
      nullptr);

  auto graph = std::make_unique<Graph>();
  Node* x = graph->placeholder("x");
  Node* relu = graph->call_function("torch.relu", {x});
  graph->output(graph->call_function("v1_plugin.identity", {relu}));
  GraphModule gm(GraphModule::AttributeMap{}, std::move(graph));
  torch::Tensor in = torch::randn({2, 3});
  EXPECT_TRUE(torch::equal(gm.forward({in}).toTensor(), torch::relu(in)));

  GraphModuleTarget target(gm, {in});
  PipelineReport report = run_pipeline(registry, "v1_mark", target);
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_EQ(relu->target(), "torch.sigmoid");
  EXPECT_EQ(int_meta(*x, "v1_users"), 1);
  EXPECT_EQ(int_meta(*gm.graph().output_node(), "v1_example_inputs"), 1);
  EXPECT_TRUE(torch::allclose(gm.forward({in}).toTensor(), torch::sigmoid(in)));
}

// x -> neg -> output becomes x -> mul(x, -1) -> output through the second
// release's entries at slots 99..105 (GraphNumExampleInputs ..
// GraphReplacePattern), the slots the host forwards by first argument.
TEST(AbiCompat, ASecondReleasePluginReachesTheEntriesTheFirstReleaseHadThere) {
  auto plugin = load_plugin(kDir + "libv1_plugin.so");
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  PassRegistry registry;
  ASSERT_TRUE(registry.add(*plugin).ok());
  auto graph = std::make_unique<Graph>();
  graph->output(graph->call_function("torch.neg", {graph->placeholder("x")}));
  GraphModule gm(GraphModule::AttributeMap{}, std::move(graph));
  torch::Tensor in = torch::randn({2, 3});
  GraphModuleTarget target(gm, {in});
  PipelineReport report = run_pipeline(registry, "v1_rewrite", target);
  ASSERT_TRUE(report.ok()) << report.failure;
  const Node* out = gm.graph().output_node();
  EXPECT_EQ(int_meta(*out, "v1_matches"), 1);
  EXPECT_EQ(int_meta(*out, "v1_input_rank"), 2);
  std::vector<std::string> targets;
  for (const Node* n : gm.graph().nodes()) {
    if (n->op() == Opcode::kCallFunction) targets.push_back(n->target());
  }
  EXPECT_EQ(targets, std::vector<std::string>{"torch.mul"});
  EXPECT_TRUE(torch::equal(gm.forward({in}).toTensor(), in * -1.0));
}

// One release's FxApi entries as its header lays them out
// (entries_probe.c, built against that header).
struct ReleasedEntries {
  uint32_t version = 0;
  std::vector<std::pair<std::string, size_t>> entries;  // in table order
};

ReleasedEntries released_entries(const std::string& name) {
  struct Entry {
    const char* name;
    size_t offset;
  };
  using Fn = const Entry* (*)(size_t*, uint32_t*);
  ReleasedEntries out;
  std::string path = kDir + "libentries_" + name + ".so";
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(lib, nullptr) << dlerror();
  if (lib == nullptr) return out;
  auto fn = reinterpret_cast<Fn>(dlsym(lib, "fx_released_entries"));
  EXPECT_NE(fn, nullptr) << path;
  size_t count = 0;
  const Entry* entries = fn ? fn(&count, &out.version) : nullptr;
  for (size_t i = 0; i < count; ++i) {
    out.entries.emplace_back(entries[i].name, entries[i].offset);
  }
  return out;
}

const void* slot(const FxApi* table, size_t offset) {
  const void* p = nullptr;
  std::memcpy(&p, reinterpret_cast<const char*>(table) + offset, sizeof p);
  return p;
}

// For every released header: the table this host hands a plugin of its
// version holds, at each of the header's offsets, the host's entry of the
// name the header gives there. The only exceptions are the version-1 slots
// the two releases of version 1 disagree on (99..105), which hold the
// forwarders whose behaviour the two plugins above check.
TEST(AbiCompat, EveryReleasedHeadersEntriesAreServedAtTheirOffsets) {
  std::map<std::string, size_t> current;
  for (const auto& [name, offset] : released_entries("current").entries) {
    current[name] = offset;
  }
  ASSERT_EQ(current.size(), (sizeof(FxApi) - sizeof(void*)) / sizeof(void*));
  const size_t first = offsetof(FxApi, CreateStatus);
  std::set<size_t> forwarded;
  for (const char* release :
       {"v1_106", "v1_123", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9",
        "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17"}) {
    SCOPED_TRACE(release);
    ReleasedEntries r = released_entries(release);
    ASSERT_FALSE(r.entries.empty());
    const FxApi* table = api(r.version);
    ASSERT_EQ(table->version, r.version);
    for (size_t i = 0; i < r.entries.size(); ++i) {
      const auto& [name, offset] = r.entries[i];
      SCOPED_TRACE(name);
      EXPECT_EQ(offset, first + i * sizeof(void*));
      ASSERT_EQ(current.count(name), 1u) << "an entry was removed";
      ASSERT_NE(slot(table, offset), nullptr);
      if (r.version == 1 && i >= 99 && i <= 105) {
        forwarded.insert(offset);
        EXPECT_NE(slot(table, offset), slot(api(), current[name]));
        continue;
      }
      EXPECT_EQ(slot(table, offset), slot(api(), current[name]));
    }
  }
  EXPECT_EQ(forwarded.size(), 7u);
}

// A plugin built against each later release: loaded at its release's
// struct sizes (two passes: the FxPassInfo stride), handed its version's
// table with every entry of its header filled in, and run.
TEST(AbiCompat, APluginBuiltAgainstEachLaterReleaseRuns) {
  for (uint32_t version = 2; version <= FX_API_VERSION; ++version) {
    SCOPED_TRACE(version);
    auto plugin = load_plugin(kDir + "librelease_plugin_v" +
                              std::to_string(version) + ".so");
    ASSERT_TRUE(plugin.ok()) << plugin.status();
    EXPECT_EQ((*plugin)->info().api_version, version);
    ASSERT_EQ((*plugin)->num_passes(), 2u);
    PassRegistry registry;
    ASSERT_TRUE(registry.add(*plugin).ok());
    auto graph = std::make_unique<Graph>();
    Node* relu = graph->call_function("torch.relu", {graph->placeholder("x")});
    graph->output(relu);
    GraphModule gm(GraphModule::AttributeMap{}, std::move(graph));
    torch::Tensor in = torch::randn({2, 3});
    GraphModuleTarget target(gm, {in});
    PipelineReport report =
        run_pipeline(registry, "release_first,release_second", target);
    ASSERT_TRUE(report.ok()) << report.failure;
    EXPECT_EQ(relu->target(), "torch.sigmoid");
    EXPECT_EQ(int_meta(*gm.graph().output_node(), "release_version"),
              static_cast<int64_t>(version));
  }
}

TEST(AbiCompat, EachPluginIsHandedNoTableNewerThanItAskedFor) {
  EXPECT_EQ(api(1)->version, 1u);
  EXPECT_NE(api(1)->NodeUsers, nullptr);  // the last entry of version 1
  EXPECT_EQ(api(1)->ValueTensorMeta2, nullptr);
  EXPECT_EQ(api(1)->CallTensorMeta2, nullptr);
  EXPECT_EQ(api(0)->version, 1u);
  EXPECT_EQ(api(2)->version, 2u);
  EXPECT_NE(api(2)->ValueTensorMeta2, nullptr);
  EXPECT_EQ(api(FX_API_VERSION + 5), api());
  EXPECT_EQ(api()->version, static_cast<uint32_t>(FX_API_VERSION));
}

// Its passes check that they got this host's whole table; the second is
// only found at the plugin's declared pass_info_size.
TEST(AbiCompat, ANewerPluginIsReadAtItsDeclaredSizesAndGetsThisHostsTable) {
  auto plugin = load_plugin(kDir + "libnewer_plugin.so");
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  ASSERT_EQ((*plugin)->num_passes(), 2u);
  EXPECT_STREQ((*plugin)->pass(1).name, "newer_second");
  PassRegistry registry;
  ASSERT_TRUE(registry.add(*plugin).ok());
  GraphFile file;
  file.graph = std::make_unique<Graph>();
  file.graph->output(file.graph->placeholder("x"));
  GraphFileTarget target(file);
  PipelineReport report =
      run_pipeline(registry, "newer_first,newer_second", target);
  EXPECT_TRUE(report.ok()) << report.failure;
}

TEST(AbiCompat, APluginNeedingANewerHostIsRefusedBeforeItsCodeRuns) {
  unsetenv("FX_FUTURE_PLUGIN_RAN");
  const std::string path = "tests/plugin_api/plugins/libfuture_plugin.so";
  EXPECT_EQ(error_of(load_plugin(path)),
            "plugin 'future_plugin' (" + path +
                ") requires fx plugin API version 18 or later, but this host "
                "provides version 17. Fix: use an fx host that provides API "
                "version 18, or rebuild the plugin with min_api_version <= 17");
  EXPECT_EQ(std::getenv("FX_FUTURE_PLUGIN_RAN"), nullptr);
}

TEST(AbiCompat, DeclaredSizesAreChecked) {
  FxPassInfo passes[2] = {};
  FxPluginInfo info{};
  info.name = "sized";
  info.version = "1";
  info.api_version = info.min_api_version = FX_API_VERSION;
  info.passes = passes;
  info.num_passes = 0;
  info.struct_size = 8;
  EXPECT_EQ(error_of(check_plugin_info(&info, "x.so")),
            "plugin 'sized' (x.so) declares struct_size 8, smaller than the "
            "FxPluginInfo of API version 2 (56 bytes). Fix: set struct_size "
            "= sizeof(FxPluginInfo) and pass_info_size = sizeof(FxPassInfo) "
            "(FXP_PLUGIN does)");
  info.struct_size = 0;  // the header's sizes
  EXPECT_TRUE(check_plugin_info(&info, "x.so").ok());
  info.api_version = FX_API_VERSION + 1;  // newer, several passes, no size
  info.num_passes = 2;
  EXPECT_EQ(
      error_of(check_plugin_info(&info, "x.so"))
          .rfind("plugin 'sized' (x.so) was built against fx plugin API "
                 "version 18, newer than this host's 17, and does not declare "
                 "pass_info_size",
                 0),
      0u);
}

// FxPassInfo's version-6 fields (tolerance, idempotent) are read only from
// plugins whose FxPassInfo has them.
TEST(AbiCompat, AVersionOnePluginGetsTheDefaultDeclarations) {
  auto plugin = load_plugin(kDir + "libv1_plugin.so");
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  PassDeclaration declared = (*plugin)->declaration(0);
  EXPECT_FALSE(declared.declares_tolerance());
  EXPECT_EQ(declared.tolerance.rtol, 0.0);
  EXPECT_EQ(declared.tolerance.atol, 0.0);
  EXPECT_FALSE(declared.idempotent);
}

constexpr size_t kPassInfoV1Size = offsetof(FxPassInfo, tolerance);

// A plugin built against versions 2 to 5 declares the version-1 size; the
// bytes where version 6 has its fields belong to the next pass (or lie past
// the array), so the host must neither read nor check them.
TEST(AbiCompat, APluginOlderThanVersionSixIsReadWithoutTheNewFields) {
  alignas(FxPassInfo) unsigned char passes[2 * kPassInfoV1Size];
  const char* names[] = {"first", "second"};
  for (size_t p = 0; p < 2; ++p) {
    FxPassInfo head{};
    head.name = names[p];
    head.run = [](const FxApi*, FxGraph*, const FxOptions*, void*,
                  int* changed) -> FxStatus* {
      *changed = 0;
      return nullptr;
    };
    std::memcpy(passes + p * kPassInfoV1Size, &head, kPassInfoV1Size);
  }
  FxPluginInfo info{};
  info.name = "five";
  info.version = "1";
  info.api_version = info.min_api_version = 5;
  info.passes = reinterpret_cast<const FxPassInfo*>(passes);
  info.num_passes = 2;
  info.struct_size = sizeof(FxPluginInfo);
  info.pass_info_size = kPassInfoV1Size;
  ASSERT_TRUE(check_plugin_info(&info, "five.so").ok());
  EXPECT_STREQ(plugin_pass(info, 1).name, "second");
  PassDeclaration declared = pass_declaration(info, plugin_pass(info, 0));
  EXPECT_FALSE(declared.declares_tolerance());
  EXPECT_FALSE(declared.idempotent);
  // pass_info_size 0 means version 5's own (version-1) size too.
  info.pass_info_size = 0;
  ASSERT_TRUE(check_plugin_info(&info, "five.so").ok());
  EXPECT_STREQ(plugin_pass(info, 1).name, "second");
}

// A version-6 plugin's declarations: what the wrapper wrote, and refused
// when out of range.
TEST(AbiCompat, VersionSixDeclarationsAreReadAndChecked) {
  fxp::PassDef def("declares", "d",
                   [](const FxApi*, FxGraph*, const FxOptions*, void*,
                      int* changed) -> FxStatus* {
                     *changed = 0;
                     return nullptr;
                   });
  def.tolerance(1e-3, 1e-4).idempotent();
  FxPassInfo pass = def.info();
  FxPluginInfo info{};
  info.name = "six";
  info.version = "1";
  info.api_version = info.min_api_version = 6;
  info.passes = &pass;
  info.num_passes = 1;
  info.struct_size = sizeof(FxPluginInfo);
  info.pass_info_size = sizeof(FxPassInfo);
  ASSERT_TRUE(check_plugin_info(&info, "six.so").ok());
  PassDeclaration declared = pass_declaration(info, pass);
  EXPECT_TRUE(declared.declares_tolerance());
  EXPECT_EQ(declared.tolerance.rtol, 1e-3);
  EXPECT_EQ(declared.tolerance.atol, 1e-4);
  EXPECT_TRUE(declared.idempotent);

  pass.tolerance.rtol = -1;
  EXPECT_EQ(error_of(check_plugin_info(&info, "six.so")),
            "plugin 'six' (six.so), pass 'declares': its tolerance declares "
            "rtol = -1; it must be a finite number >= 0 (0 and 0: none "
            "declared)");
  pass.tolerance.rtol = 0;
  pass.tolerance.atol = std::nan("");
  EXPECT_NE(error_of(check_plugin_info(&info, "six.so")).find("atol = nan"),
            std::string::npos);
  pass.tolerance.atol = 0;
  pass.idempotent = 2;
  EXPECT_EQ(error_of(check_plugin_info(&info, "six.so")),
            "plugin 'six' (six.so), pass 'declares': idempotent is 2; it "
            "must be 0 or 1");
  // The same bytes behind a version-5 declaration are never looked at.
  info.api_version = info.min_api_version = 5;
  EXPECT_TRUE(check_plugin_info(&info, "six.so").ok());
  EXPECT_FALSE(pass_declaration(info, pass).idempotent);
}

// The tensor-meta entries of both versions, on a value of a real run: the
// version-1 entry writes exactly the version-1 fields (a version-1 plugin's
// struct ends there), the version-2 entry as many as the caller declares.
class TensorMetaEntries : public ::testing::Test {
 protected:
  void SetUp() override {
    auto graph = std::make_unique<Graph>();
    Node* x = graph->placeholder("x");
    graph->output(graph->call_function("torch.relu", {x}));
    gm_ = std::make_unique<GraphModule>(GraphModule::AttributeMap{},
                                        std::move(graph));
  }

  // Calls `check` with the value of the placeholder.
  template <typename Fn>
  void with_value(Fn check) {
    torch::Tensor in = torch::randn({2, 3});
    DLManagedTensor* dl = at::toDLPack(in);
    const DLTensor* inputs[] = {&dl->dl_tensor};
    auto on_node = [](FxNode* node, const FxValue* value, void* data) {
      if (api()->NodeOp(node) == FX_OP_PLACEHOLDER) {
        (*static_cast<Fn*>(data))(value);
      }
      return static_cast<FxStatus*>(nullptr);
    };
    FxStatus* s = api()->GraphRun(to_handle(&gm_->graph()), inputs, 1, 0,
                                  on_node, &check);
    EXPECT_EQ(s, nullptr) << (s ? api()->GetStatusMessage(s) : "");
    dl->deleter(dl);
  }

  std::unique_ptr<GraphModule> gm_;
};

TEST_F(TensorMetaEntries, VersionOneWritesOnlyVersionOneFields) {
  with_value([](const FxValue* v) {
    FxTensorMeta meta;
    std::memset(&meta, 0xAB, sizeof meta);
    ASSERT_EQ(api(1)->ValueTensorMeta(v, &meta), nullptr);
    EXPECT_EQ(meta.ndim, 2);
    EXPECT_EQ(meta.struct_size, 0xABABABABu);  // past a v1 struct: untouched
  });
}

TEST_F(TensorMetaEntries, VersionTwoWritesWhatTheCallerDeclares) {
  with_value([](const FxValue* v) {
    FxTensorMeta meta;
    FX_TENSOR_META_INIT(meta);
    ASSERT_EQ(api()->ValueTensorMeta2(v, &meta), nullptr);
    EXPECT_EQ(meta.ndim, 2);
    EXPECT_EQ(meta.shape[1], 3);
    EXPECT_EQ(meta.struct_size, sizeof(FxTensorMeta));
    meta.struct_size = 4;
    FxStatus* s = api()->ValueTensorMeta2(v, &meta);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(api()->GetStatusCode(s), FX_INVALID_ARGUMENT);
    api()->ReleaseStatus(s);
  });
}

// The wrapper reads tensor meta through whichever entry the table has.
TEST_F(TensorMetaEntries, TheWrapperUsesTheEntryTheTableHas) {
  for (uint32_t version : {1u, 2u}) {
    fxp::api() = api(version);
    with_value([](const FxValue* v) {
      EXPECT_EQ(fxp::RuntimeValue(v).tensor_meta().ndim, 2);
    });
  }
  fxp::api() = api();
}

TEST(AbiCompat, TheWrapperRefusesEntriesNewerThanTheTable) {
  fxp::api() = api(1);
  try {
    fxp::require_api_version(2, "ValueTensorMeta2");
    ADD_FAILURE() << "no error";
  } catch (const fxp::Error& e) {
    EXPECT_EQ(e.code(), FX_UNIMPLEMENTED);
    EXPECT_STREQ(e.what(),
                 "ValueTensorMeta2 needs fx plugin API version 2, but the "
                 "host's table is version 1 (use a newer fx host)");
  }
  fxp::api() = api(2);
  EXPECT_NO_THROW(fxp::require_api_version(2, "ValueTensorMeta2"));
  fxp::api() = api();
}

}  // namespace
}  // namespace fx::host
