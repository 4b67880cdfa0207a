// Pipelines from text and JSON, options checked against schemas, and
// ordering by declared constraints: each error with its exact message.
#include "host/pipeline/pipeline.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/options/pass_options.h"
#include "host/pipeline/named_pipelines.h"
#include "host/pipeline/pass_ordering.h"
#include "tests/testing/status_matchers.h"

namespace fx::host {
namespace {

using ::fx::testing::error_of;

std::vector<std::string> pass_names(const PipelineSpec& spec) {
  std::vector<std::string> out;
  for (const PassInvocation& p : spec.passes) out.push_back(p.pass);
  return out;
}

TEST(PipelineText, ParsesPassesAndOptionsWithListValues) {
  auto spec = parse_pipeline_text(
      "shape_prop,decompose{rules=relu,gelu},quantize{dtype=int8}");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(pass_names(*spec),
            (std::vector<std::string>{"shape_prop", "decompose", "quantize"}));
  ASSERT_EQ(spec->passes[1].options.size(), 1u);
  EXPECT_EQ(spec->passes[1].options[0].first, "rules");
  EXPECT_EQ(spec->passes[1].options[0].second.text, "relu,gelu");
  EXPECT_EQ(spec->passes[2].options[0].second.text, "int8");
}

TEST(PipelineText, ToleratesSpacesAndSeveralOptions) {
  auto spec = parse_pipeline_text(" a { x = 1 , rules = r1 , r2 , y=z } , b ");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->passes[0].options.size(), 3u);
  EXPECT_EQ(spec->passes[0].options[1].second.text, "r1,r2");
  EXPECT_EQ(spec->passes[0].options[2].second.text, "z");
  EXPECT_EQ(pipeline_text(spec->passes), "a{x=1,rules=r1,r2,y=z},b");
}

TEST(PipelineText, TextRoundTrips) {
  std::string text =
      "shape_prop,decompose{rules=relu,gelu},quantize{dtype=int8}";
  auto spec = parse_pipeline_text(text);
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(pipeline_text(spec->passes), text);
}

TEST(PipelineText, ErrorsNameTheColumn) {
  EXPECT_EQ(error_of(parse_pipeline_text("")), "the pipeline is empty");
  EXPECT_EQ(error_of(parse_pipeline_text("a,,b")),
            "pipeline 'a,,b', column 3: expected a pass name, got ','");
  EXPECT_EQ(error_of(parse_pipeline_text("a,")),
            "pipeline 'a,', column 3: expected a pass name at the end");
  EXPECT_EQ(error_of(parse_pipeline_text("a{x=1")),
            "pipeline 'a{x=1', column 2: the options of pass 'a' open here "
            "but never close");
  EXPECT_EQ(error_of(parse_pipeline_text("a{relu}")),
            "pipeline 'a{relu}', column 3: expected key=value in the options "
            "of pass 'a', got 'relu'");
  EXPECT_EQ(error_of(parse_pipeline_text("a b")),
            "pipeline 'a b', column 3: expected ',' between passes, got 'b'");
  EXPECT_EQ(error_of(parse_pipeline_text("a{x={y}}")),
            "pipeline 'a{x={y}}', column 5: options cannot nest '{'");
  EXPECT_EQ(error_of(parse_pipeline_text("a{=1}")),
            "pipeline 'a{=1}', column 3: bad option name '' for pass 'a'");
}

// Named pipelines (named_pipelines.h): one word for a pass list.

const std::vector<std::string> kInferencePasses = {
    "shape_prop",    "fold_bn",     "fuse_conv",
    "fuse_linear",   "fuse_matmul", "fuse_window_attention",
    "fuse_pointwise"};

TEST(NamedPipelines, EachNameStandsForItsPasses) {
  auto o1 = parse_pipeline_text("O1");
  ASSERT_TRUE(o1.ok()) << o1.status();
  EXPECT_EQ(pass_names(*o1), (std::vector<std::string>{"dce", "cse"}));
  EXPECT_EQ(o1->named_pipelines, (std::vector<std::string>{"O1"}));
  auto inference = parse_pipeline_text(" inference ");
  ASSERT_TRUE(inference.ok()) << inference.status();
  EXPECT_EQ(pass_names(*inference), kInferencePasses);
  auto o2 = parse_pipeline_text("O2");
  ASSERT_TRUE(o2.ok()) << o2.status();
  std::vector<std::string> o2_passes = {"dce", "cse"};
  o2_passes.insert(o2_passes.end(), kInferencePasses.begin(),
                   kInferencePasses.end());
  EXPECT_EQ(pass_names(*o2), o2_passes);
  EXPECT_EQ(pipeline_text(o2->passes),
            "dce,cse,shape_prop,fold_bn,fuse_conv,fuse_linear,fuse_matmul,"
            "fuse_window_attention,fuse_pointwise");
}

TEST(NamedPipelines, StandAmongPassesAndInConfigs) {
  auto spec = parse_pipeline_text("O1,dot{path=g.dot},O1");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(pass_names(*spec),
            (std::vector<std::string>{"dce", "cse", "dot", "dce", "cse"}));
  EXPECT_EQ(spec->named_pipelines, (std::vector<std::string>{"O1"}));
  auto config = parse_pipeline_config(
      R"({"pipeline": ["inference", {"pass": "dce"}]})", "c.json", "");
  ASSERT_TRUE(config.ok()) << config.status();
  std::vector<std::string> want = kInferencePasses;
  want.push_back("dce");
  EXPECT_EQ(pass_names(*config), want);
  EXPECT_EQ(config->named_pipelines, (std::vector<std::string>{"inference"}));
  // A plain pipeline names none.
  EXPECT_TRUE(parse_pipeline_text("dce,cse")->named_pipelines.empty());
}

TEST(NamedPipelines, TakeNoOptionsAndAreCaseSensitive) {
  EXPECT_EQ(error_of(parse_pipeline_text("dce,O2{x=1}")),
            "pipeline 'dce,O2{x=1}', column 5: the named pipeline 'O2' takes "
            "no options (it stands for dce,cse,shape_prop,fold_bn,fuse_conv,"
            "fuse_linear,fuse_matmul,fuse_window_attention,fuse_pointwise)");
  // "o2" is no name: it stays a pass name (for the pass manager to refuse).
  auto lower = parse_pipeline_text("o2");
  ASSERT_TRUE(lower.ok());
  EXPECT_EQ(pass_names(*lower), (std::vector<std::string>{"o2"}));
  EXPECT_TRUE(lower->named_pipelines.empty());
}

TEST(NamedPipelines, TheTable) {
  EXPECT_EQ(named_pipeline_names(), "O1, O2, inference");
  EXPECT_EQ(find_named_pipeline("inference")->engine, "inference_plan");
  EXPECT_EQ(find_named_pipeline("O2")->engine, "inference_plan");
  EXPECT_EQ(find_named_pipeline("O1")->engine, "graph_module");
  EXPECT_EQ(find_named_pipeline("O3"), nullptr);
  for (const NamedPipeline& p : named_pipelines()) {
    EXPECT_FALSE(p.description.empty()) << p.name;
    auto spec = parse_pipeline_text(p.passes);
    ASSERT_TRUE(spec.ok()) << p.name << ": " << spec.status();
    EXPECT_TRUE(spec->named_pipelines.empty()) << p.name;
    // Every pass a name uses comes from a first-party plugin it can name.
    for (const PassInvocation& pass : spec->passes) {
      EXPECT_TRUE(uses_pass(p, pass.pass));
      EXPECT_FALSE(first_party_plugin_of(pass.pass).empty()) << pass.pass;
    }
  }
  EXPECT_EQ(first_party_plugin_of("fold_bn"),
            "fx_inference (libfx_inference.so)");
  EXPECT_FALSE(uses_pass(*find_named_pipeline("O1"), "fold_bn"));
}

TEST(PipelineConfig, ReadsEveryKey) {
  auto spec = parse_pipeline_config(R"({
    "plugins": ["libp.so", {"path": "/abs/v.so", "sha256": ")" +
                                        std::string(64, 'a') + R"("}],
    "plugin_dirs": ["dir"],
    "pipeline": [{"pass": "decompose", "options": {"rules": ["relu", "gelu"],
                  "n": 3, "f": 0.5, "b": true, "s": "x"}, "on_failure": "skip"},
                 "dce,cse"],
    "ordering": "auto", "on_failure": "stop", "verify_each": false,
    "print_after": "all", "assume": ["tensor_meta"], "reproducer_dir": "r"
  })",
                                    "conf.json", "/base");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(pass_names(*spec),
            (std::vector<std::string>{"decompose", "dce", "cse"}));
  EXPECT_EQ(spec->plugins[0].path, "/base/libp.so");
  EXPECT_EQ(spec->plugins[1].path, "/abs/v.so");
  EXPECT_EQ(spec->plugins[1].sha256, std::string(64, 'a'));
  EXPECT_EQ(spec->plugin_dirs[0], "/base/dir");
  EXPECT_EQ(spec->reproducer_dir, "/base/r");
  EXPECT_EQ(spec->ordering, Ordering::kAuto);
  EXPECT_FALSE(spec->verify_each);
  EXPECT_TRUE(spec->print_after_all);
  EXPECT_EQ(spec->assume, std::vector<std::string>{"tensor_meta"});
  const auto& options = spec->passes[0].options;
  ASSERT_EQ(options.size(), 5u);
  EXPECT_EQ(options[0].second.kind, OptionInput::Kind::kList);
  EXPECT_EQ(options[0].second.list, (std::vector<std::string>{"relu", "gelu"}));
  EXPECT_EQ(options[1].second.kind, OptionInput::Kind::kInt);
  EXPECT_EQ(options[2].second.kind, OptionInput::Kind::kFloat);
  EXPECT_EQ(options[3].second.kind, OptionInput::Kind::kBool);
  EXPECT_EQ(options[4].second.kind, OptionInput::Kind::kString);
  EXPECT_EQ(spec->passes[0].on_failure, FailurePolicy::kSkip);
}

TEST(PipelineConfig, WrittenConfigReadsBack) {
  auto spec = parse_pipeline_config(
      R"({"pipeline": [{"pass": "q", "options": {"bits": 8, "names": ["a"]}}],
          "on_failure": "skip", "assume": ["tensor_meta"]})",
      "c.json", "");
  ASSERT_TRUE(spec.ok());
  std::string json = pipeline_config_json(*spec);
  auto again = parse_pipeline_config(json, "again.json", "");
  ASSERT_TRUE(again.ok()) << again.status() << json;
  EXPECT_EQ(pipeline_config_json(*again), json);
}

// "isolate": true, false or "auto", each read and written back; unset is
// the library's default, in process.
TEST(PipelineConfig, IsolatePolicyHasThreeValues) {
  EXPECT_FALSE(parse_pipeline_text("a")->isolate.has_value());
  EXPECT_EQ(parse_pipeline_text("a")->isolation(), Isolation::kNone);
  for (auto [word, policy] : {std::pair{"true", Isolation::kAll},
                              std::pair{"false", Isolation::kNone},
                              std::pair{"\"auto\"", Isolation::kAuto}}) {
    SCOPED_TRACE(word);
    auto spec = parse_pipeline_config(
        std::string(R"({"pipeline": "a", "isolate": )") + word + "}", "c.json",
        "");
    ASSERT_TRUE(spec.ok()) << spec.status();
    EXPECT_EQ(spec->isolate, policy);
    EXPECT_EQ(spec->isolation(), policy);
    auto again = parse_pipeline_config(pipeline_config_json(*spec), "r", "");
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->isolate, policy);
  }
  // A timeout isolates every pass, whatever "isolate" says.
  auto spec = parse_pipeline_config(
      R"({"pipeline": "a", "isolate": "auto", "pass_timeout": 1})", "c.json",
      "");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->isolation(), Isolation::kAll);
}

// Isolation: "isolate", and a timeout or memory limit, which imply it.
TEST(PipelineConfig, IsolationKeysAreReadCheckedAndWritten) {
  auto spec = parse_pipeline_config(R"({"pipeline": "a", "isolate": true})",
                                    "c.json", "");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->isolated());
  spec = parse_pipeline_config(
      R"({"pipeline": "a", "pass_timeout": 2.5, "pass_memory_limit": 512})",
      "c.json", "");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_FALSE(spec->isolate);
  EXPECT_TRUE(spec->isolated());
  EXPECT_EQ(spec->pass_timeout_seconds, 2.5);
  EXPECT_EQ(spec->pass_memory_limit_mib, 512u);
  auto again = parse_pipeline_config(pipeline_config_json(*spec), "r", "");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->pass_timeout_seconds, 2.5);
  EXPECT_EQ(again->pass_memory_limit_mib, 512u);
  EXPECT_FALSE(parse_pipeline_text("a")->isolated());

  EXPECT_EQ(error_of(parse_pipeline_config(
                R"({"pipeline": "a", "isolate": "yes"})", "c.json", "")),
            "c.json: 'isolate': expected true, false or \"auto\", got "
            "\"yes\"");
  EXPECT_EQ(error_of(parse_pipeline_config(
                R"({"pipeline": "a", "pass_timeout": 0})", "c.json", "")),
            "c.json: 'pass_timeout': expected seconds (a number > 0), got 0");
  EXPECT_EQ(error_of(parse_pipeline_config(
                R"({"pipeline": "a", "pass_memory_limit": -5})", "c.json", "")),
            "c.json: 'pass_memory_limit': expected MiB (an integer from 1 to "
            "1048576), got -5");
}

TEST(PipelineConfig, ErrorsNameTheKey) {
  EXPECT_EQ(error_of(parse_pipeline_config("[]", "c.json", "")),
            "c.json: expected a JSON object at the top");
  EXPECT_EQ(error_of(parse_pipeline_config("{}", "c.json", "")),
            "c.json: no passes (add \"pipeline\")");
  EXPECT_EQ(error_of(parse_pipeline_config(R"({"pipeline": "a", "colour": 1})",
                                           "c.json", "")),
            "c.json: 'colour': unknown key (expected pipeline, plugins, "
            "plugin_dirs, ordering, on_failure, verify_each, print_after, "
            "assume, reproducer_dir, isolate, pass_timeout, "
            "pass_memory_limit)");
  EXPECT_EQ(error_of(parse_pipeline_config(
                R"({"pipeline": ["a", {"options": {}}]})", "c.json", "")),
            "c.json: 'pipeline[1]': missing \"pass\"");
  EXPECT_EQ(error_of(parse_pipeline_config(
                R"({"pipeline": [{"pass": "a", "on_failure": "retry"}]})",
                "c.json", "")),
            "c.json: 'pipeline[0]'.on_failure: expected \"stop\" or \"skip\", "
            "got \"retry\"");
  EXPECT_EQ(error_of(parse_pipeline_config(
                R"({"pipeline": "a", "ordering": "random"})", "c.json", "")),
            "c.json: 'ordering': expected \"explicit\" or \"auto\", got "
            "\"random\"");
  EXPECT_EQ(
      error_of(parse_pipeline_config(
          R"({"pipeline": "a", "plugins": [{"path": "p.so", "sha256": "12"}]})",
          "c.json", "")),
      "c.json: 'plugins[0]'.sha256: expected \"sha256\": 64 hex digits");
  EXPECT_EQ(error_of(parse_pipeline_config(
                R"({"pipeline": [{"pass": "a", "options": {"x": null}}]})",
                "c.json", "")),
            "c.json: 'pipeline[0]'.options.x: expected a bool, number, string "
            "or array, got null");
  std::string broken = error_of(parse_pipeline_config("{", "c.json", ""));
  EXPECT_EQ(broken.rfind("c.json: malformed JSON: ", 0), 0u) << broken;
}

// Hostile configs (issue 22): each a clear error naming the file and place.
TEST(PipelineConfigLimits, NumbersKeysAndNestingAreChecked) {
  EXPECT_EQ(error_of(parse_pipeline_config(
                R"({"pipeline": [{"pass": "a", "options": {"n": 1e999}}]})",
                "c.json", "")),
            "c.json: number 1e999 out of range (beyond a double) at "
            "pipeline[0].options.n");
  EXPECT_EQ(error_of(parse_pipeline_config(
                R"({"pipeline": [{"pass": "a", "options": {"n": )"
                R"(99999999999999999999999}}]})",
                "c.json", "")),
            "c.json: integer 99999999999999999999999 out of range (beyond 64 "
            "bits) at pipeline[0].options.n");
  EXPECT_EQ(error_of(parse_pipeline_config(
                R"({"pipeline": "a", "pipeline": "b"})", "c.json", "")),
            "c.json: duplicate key 'pipeline' at the top level");
  std::string deep = std::string(50000, '[') + std::string(50000, ']');
  EXPECT_EQ(
      error_of(
          parse_pipeline_config(R"({"pipeline": )" + deep + "}", "c.json", ""))
          .rfind("c.json: nested deeper than 1000 levels at pipeline[0]", 0),
      0u);
}

TEST(PipelineConfigLimits, OnlyRegularFilesAreRead) {
  EXPECT_EQ(error_of(read_pipeline_config("/dev/zero")),
            "cannot read '/dev/zero': not a regular file (a character device)");
}

// The config and the command line read these words with the same parser and
// report the same message (callers add where the word came from).
TEST(PipelineKeywords, OneParserEachWithOneMessage) {
  EXPECT_EQ(*parse_failure_policy("stop"), FailurePolicy::kStop);
  EXPECT_EQ(*parse_failure_policy("skip"), FailurePolicy::kSkip);
  EXPECT_EQ(*parse_ordering("explicit"), Ordering::kExplicit);
  EXPECT_EQ(*parse_ordering("auto"), Ordering::kAuto);
  EXPECT_EQ(error_of(parse_failure_policy("retry")),
            "expected \"stop\" or \"skip\", got \"retry\"");
  EXPECT_EQ(error_of(parse_ordering("Auto")),
            "expected \"explicit\" or \"auto\", got \"Auto\"");
  EXPECT_EQ(parse_ordering("").status().code(),
            absl::StatusCode::kInvalidArgument);
  for (FailurePolicy p : {FailurePolicy::kStop, FailurePolicy::kSkip}) {
    EXPECT_EQ(*parse_failure_policy(failure_policy_name(p)), p);
  }
  for (Ordering o : {Ordering::kExplicit, Ordering::kAuto}) {
    EXPECT_EQ(*parse_ordering(ordering_name(o)), o);
  }
  // A config's non-string value gets the same message, with the JSON value.
  EXPECT_EQ(error_of(parse_pipeline_config(
                R"({"pipeline": "a", "on_failure": 1})", "c.json", "")),
            "c.json: 'on_failure': expected \"stop\" or \"skip\", got 1");
}

// ------------------------------------------------------------- options

const FxOptionSpec kOptions[] = {
    {"flag", FX_OPTION_BOOL, "false", ""},
    {"count", FX_OPTION_INT, "3", ""},
    {"scale", FX_OPTION_FLOAT, "0.5", ""},
    {"dtype", FX_OPTION_STRING, "int8", ""},
    {"rules", FX_OPTION_STRING_LIST, "relu,gelu", ""},
};

FxPassInfo pass_with_options() {
  FxPassInfo info{};
  info.name = "quantize";
  info.options = kOptions;
  info.num_options = 5;
  return info;
}

OptionInput text(const char* t) {
  OptionInput in;
  in.text = t;
  return in;
}

const OptionValue& value(const FxOptions& o, const char* name) {
  for (const auto& [n, v] : o.values) {
    if (n == name) return v;
  }
  static OptionValue none;
  return none;
}

TEST(PassOptions, DefaultsFillWhatIsNotGiven) {
  FxPassInfo info = pass_with_options();
  auto bound = bind_pass_options(info, {{"count", text("8")}});
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(value(*bound, "count").i, 8);
  EXPECT_FALSE(value(*bound, "flag").b);
  EXPECT_EQ(value(*bound, "scale").f, 0.5);
  EXPECT_EQ(value(*bound, "dtype").s, "int8");
  EXPECT_EQ(value(*bound, "rules").list,
            (std::vector<std::string>{"relu", "gelu"}));
}

TEST(PassOptions, UnknownOptionNamesThePassAndItsOptions) {
  FxPassInfo info = pass_with_options();
  EXPECT_EQ(error_of(bind_pass_options(info, {{"bits", text("8")}})),
            "pass 'quantize' has no option 'bits' (its options: flag, count, "
            "scale, dtype, rules)");
}

TEST(PassOptions, WrongTypeNamesThePassAndOption) {
  FxPassInfo info = pass_with_options();
  EXPECT_EQ(error_of(bind_pass_options(info, {{"count", text("eight")}})),
            "option 'count' of pass 'quantize' is a int: expected an int, got "
            "'eight'");
  EXPECT_EQ(error_of(bind_pass_options(info, {{"flag", text("yes")}})),
            "option 'flag' of pass 'quantize' is a bool: expected a bool "
            "(true, false, 1 or 0), got 'yes'");
  EXPECT_EQ(error_of(bind_pass_options(info, {{"scale", text("1.5x")}})),
            "option 'scale' of pass 'quantize' is a float: expected a float, "
            "got '1.5x'");
  OptionInput number;
  number.kind = OptionInput::Kind::kInt;
  number.text = "8";
  EXPECT_EQ(error_of(bind_pass_options(info, {{"dtype", number}})),
            "option 'dtype' of pass 'quantize' is a string: expected string, "
            "got a JSON integer (8)");
  EXPECT_EQ(error_of(bind_pass_options(info, {{
                                                  "count",
                                                  text("1"),
                                              },
                                              {"count", text("2")}})),
            "option 'count' of pass 'quantize' is given twice");
}

// ------------------------------------------------------------- ordering

struct Decl {
  const char* name;
  std::vector<const char*> after, before, required, produces, invalidates;
  FxPassInfo info() const {
    FxPassInfo i{};
    i.name = name;
    i.run_after = {after.data(), after.size()};
    i.run_before = {before.data(), before.size()};
    i.required = {required.data(), required.size()};
    i.produces = {produces.data(), produces.size()};
    i.invalidates = {invalidates.data(), invalidates.size()};
    return i;
  }
};

class Ordering : public ::testing::Test {
 protected:
  // shape_prop produces tensor_meta; decompose invalidates it and runs after
  // shape_prop; quantize requires it; dce runs last; a and b form a cycle.
  Decl shape_prop{"shape_prop", {}, {}, {}, {"tensor_meta"}, {}};
  Decl decompose{"decompose", {"shape_prop"}, {}, {}, {}, {"tensor_meta"}};
  Decl quantize{"quantize", {}, {}, {"tensor_meta"}, {}, {}};
  Decl dce{"dce", {"decompose", "quantize"}, {}, {}, {}, {}};
  Decl a{"a", {"b"}, {}, {}, {}, {}};
  Decl b{"b", {}, {}, {}, {}, {}};
  Decl c{"c", {"a"}, {"b"}, {}, {}, {}};
  std::vector<FxPassInfo> infos;

  std::vector<const FxPassInfo*> of(std::vector<const Decl*> decls) {
    infos.clear();
    infos.reserve(decls.size());
    for (const Decl* d : decls) infos.push_back(d->info());
    std::vector<const FxPassInfo*> out;
    for (const FxPassInfo& i : infos) out.push_back(&i);
    return out;
  }
  std::vector<std::string> names(const std::vector<const FxPassInfo*>& passes,
                                 const std::vector<size_t>& order) {
    std::vector<std::string> out;
    for (size_t i : order) out.emplace_back(passes[i]->name);
    return out;
  }
};

TEST_F(Ordering, AValidExplicitOrderPasses) {
  EXPECT_TRUE(
      check_pass_order(of({&shape_prop, &quantize, &decompose, &dce}), {})
          .ok());
}

TEST_F(Ordering, RunAfterViolationNamesBothPasses) {
  EXPECT_EQ(error_of(check_pass_order(of({&decompose, &shape_prop}), {})),
            "pass 'decompose' (position 1) must run after 'shape_prop' "
            "(position 2): 'decompose' declares run_after 'shape_prop'");
}

TEST_F(Ordering, RunBeforeViolationNamesBothPasses) {
  Decl first{"first", {}, {"second"}, {}, {}, {}};
  Decl second{"second", {}, {}, {}, {}, {}};
  EXPECT_EQ(error_of(check_pass_order(of({&second, &first}), {})),
            "pass 'first' (position 2) must run before 'second' (position 1): "
            "'first' declares run_before 'second'");
}

TEST_F(Ordering, UnmetRequirementSaysWhoProducesIt) {
  auto passes = of({&quantize});
  std::vector<const FxPassInfo*> known = passes;
  FxPassInfo sp = shape_prop.info();
  known.push_back(&sp);
  EXPECT_EQ(error_of(check_pass_order(passes, {}, known)),
            "pass 'quantize' (position 1) requires 'tensor_meta', which no "
            "earlier pass produces (passes that produce it: 'shape_prop')");
  EXPECT_EQ(error_of(check_pass_order(passes, {})),
            "pass 'quantize' (position 1) requires 'tensor_meta', which no "
            "earlier pass produces (no loaded pass produces it)");
  EXPECT_TRUE(check_pass_order(passes, {"tensor_meta"}).ok());
}

TEST_F(Ordering, RequirementProducedTooLate) {
  EXPECT_EQ(error_of(check_pass_order(of({&quantize, &shape_prop}), {})),
            "pass 'quantize' (position 1) requires 'tensor_meta', but "
            "'shape_prop' that produces it runs later (position 2)");
}

TEST_F(Ordering, RequirementInvalidatedOnTheWay) {
  EXPECT_EQ(
      error_of(check_pass_order(of({&shape_prop, &decompose, &quantize}), {})),
      "pass 'quantize' (position 3) requires 'tensor_meta', which "
      "'decompose' (position 2) invalidates and no pass after it produces "
      "again");
}

TEST_F(Ordering, CycleIsNamedWithItsReasons) {
  EXPECT_EQ(error_of(check_pass_order(of({&a, &b, &c}), {})),
            "the ordering constraints form a cycle: 'a' -> 'c' -> 'b' -> 'a' "
            "('c' declares run_after 'a'; 'c' declares run_before 'b'; 'a' "
            "declares run_after 'b')");
  std::string auto_error = error_of(auto_pass_order(of({&c, &a, &b}), {}));
  EXPECT_EQ(auto_error.rfind("the ordering constraints form a cycle: ", 0), 0u)
      << auto_error;
}

TEST_F(Ordering, AutoOrderSatisfiesConstraintsAndKeepsWrittenOrder) {
  auto passes = of({&dce, &quantize, &decompose, &shape_prop});
  auto order = auto_pass_order(passes, {});
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_EQ(
      names(passes, *order),
      (std::vector<std::string>{"shape_prop", "quantize", "decompose", "dce"}));
  auto free = of({&b, &quantize, &shape_prop});
  auto kept = auto_pass_order(free, {});
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(names(free, *kept),
            (std::vector<std::string>{"b", "shape_prop", "quantize"}));
}

TEST_F(Ordering, AutoOrderReportsRequirementsNothingProduces) {
  EXPECT_EQ(error_of(auto_pass_order(of({&quantize, &dce}), {})),
            "pass 'quantize' requires 'tensor_meta', which no pass in the "
            "pipeline produces (no loaded pass produces it)");
}

}  // namespace
}  // namespace fx::host
