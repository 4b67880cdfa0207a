// The fx-graph file's "pytree" entry (an extension of version 1; graph_json.h):
// a graph whose codegen is a PyTreeCodeGen (torch 1.13's _PyTreeCodeGen) read
// with its specs and written back byte for byte as tools/torchfx_export.py
// writes it; malformed entries refused, naming the place.
//
// kPointAndDict is tools/torchfx_export.py's document for
//   Point = collections.namedtuple("Point", ["x", "y"])
//   def f(p, d): return {"s": Point(p.x + d[1], p.y), "l": [d["k"]]}
//   symbolic_trace(f, concrete_args={"p": Point(PH, PH),
//                                    "d": {1: PH, "k": PH}})
// (json.dump(indent=1)), and kPointAndDictCode that gm's gm.code.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "fx_core/format/graph_json.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/pytree_codegen.h"
#include "fx_core/ir/tree_spec.h"

namespace fx {
namespace {

using ::testing::HasSubstr;

constexpr char kPointAndDict[] = R"json({
 "format": "fx-graph",
 "version": 1,
 "nodes": [
  {
   "name": "p_1",
   "op": "placeholder",
   "target": "p_1",
   "args": [],
   "kwargs": {}
  },
  {
   "name": "p_2",
   "op": "placeholder",
   "target": "p_2",
   "args": [],
   "kwargs": {}
  },
  {
   "name": "d_1",
   "op": "placeholder",
   "target": "d_1",
   "args": [],
   "kwargs": {}
  },
  {
   "name": "d_2",
   "op": "placeholder",
   "target": "d_2",
   "args": [],
   "kwargs": {}
  },
  {
   "name": "add",
   "op": "call_function",
   "target": "operator.add",
   "args": [
    {
     "node": "p_1"
    },
    {
     "node": "d_1"
    }
   ],
   "kwargs": {}
  },
  {
   "name": "output",
   "op": "output",
   "target": "output",
   "args": [
    [
     {
      "node": "add"
     },
     {
      "node": "p_2"
     },
     {
      "node": "d_2"
     }
    ]
   ],
   "kwargs": {}
  }
 ],
 "pytree": {
  "orig_args": [
   "p",
   "d"
  ],
  "in_spec": {
   "type": "tuple",
   "children": [
    {
     "type": "namedtuple",
     "context": {
      "class": "__main__.Point",
      "fields": [
       "x",
       "y"
      ]
     },
     "children": [
      "*",
      "*"
     ]
    },
    {
     "type": "dict",
     "context": [
      1,
      "k"
     ],
     "children": [
      "*",
      "*"
     ]
    }
   ]
  },
  "out_spec": {
   "type": "dict",
   "context": [
    "s",
    "l"
   ],
   "children": [
    {
     "type": "namedtuple",
     "context": {
      "class": "__main__.Point",
      "fields": [
       "x",
       "y"
      ]
     },
     "children": [
      "*",
      "*"
     ]
    },
    {
     "type": "list",
     "children": [
      "*"
     ]
    }
   ]
  }
 }
})json";

constexpr char kPointAndDictCode[] =
    "\n\n\ndef forward(self, p, d):\n"
    "    p_1, p_2, d_1, d_2, = fx_pytree.tree_flatten_spec([p, d], "
    "self._in_spec)\n"
    "    add = p_1 + d_1;  p_1 = d_1 = None\n"
    "    return pytree.tree_unflatten([add, p_2, d_2], self._out_spec)\n    ";

std::string parse_error(const std::string& text) {
  absl::StatusOr<GraphFile> file = parse_graph_json(text, "g.json");
  return file.ok() ? "" : std::string(file.status().message());
}

// kPointAndDict with its "pytree" entry replaced by `entry`.
std::string with_pytree(const std::string& entry) {
  std::string text(kPointAndDict);
  size_t start = text.find(",\n \"pytree\"");
  return text.substr(0, start) + ", \"pytree\": " + entry + "}";
}

TEST(PyTreeFile, TheGraphGetsTorchsCodeGenAndCode) {
  absl::StatusOr<GraphFile> file = parse_graph_json(kPointAndDict, "g.json");
  ASSERT_TRUE(file.ok()) << file.status().message();
  const PyTreeInfo* info = pytree_info(file->graph->codegen());
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->orig_args, (std::vector<std::string>{"p", "d"}));
  EXPECT_EQ(info->in_spec.repr(),
            "TreeSpec(tuple, None, [TreeSpec(namedtuple, <class "
            "'__main__.Point'>, [*, *]), TreeSpec(dict, [1, 'k'], [*, *])])");
  ASSERT_TRUE(info->out_spec.has_value());
  EXPECT_EQ(info->out_spec->repr(),
            "TreeSpec(dict, ['s', 'l'], [TreeSpec(namedtuple, <class "
            "'__main__.Point'>, [*, *]), TreeSpec(list, None, [*])])");
  EXPECT_EQ(info->in_spec.children()[0].fields(),
            (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(file->graph->python_code("self").src, kPointAndDictCode);
}

TEST(PyTreeFile, IsWrittenBackAsTorchfxExportWritesIt) {
  absl::StatusOr<GraphFile> file = parse_graph_json(kPointAndDict, "g.json");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(to_graph_json(*file), kPointAndDict);
}

TEST(PyTreeFile, AMissingOutSpecIsNull) {
  absl::StatusOr<GraphFile> file = parse_graph_json(
      with_pytree(R"({"orig_args": ["p", "d"], "in_spec": {"type": "tuple",
          "children": ["*", "*"]}, "out_spec": null})"),
      "g.json");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_FALSE(pytree_info(file->graph->codegen())->out_spec.has_value());
  EXPECT_THAT(to_graph_json(*file), HasSubstr("\"out_spec\": null\n"));
}

TEST(PyTreeFile, AGraphWithoutPyTreeIsWrittenWithoutTheEntry) {
  std::string text = with_pytree("null");
  text = text.substr(0, text.find(", \"pytree\"")) + "}";
  absl::StatusOr<GraphFile> file = parse_graph_json(text, "g.json");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(pytree_info(file->graph->codegen()), nullptr);
  EXPECT_THAT(to_graph_json(*file), ::testing::Not(HasSubstr("pytree")));
}

TEST(PyTreeFile, MalformedEntriesAreRefusedNamingThePlace) {
  EXPECT_THAT(parse_error(with_pytree("[]")),
              HasSubstr("g.json: field 'pytree': must be an object"));
  EXPECT_THAT(parse_error(with_pytree(R"({"orig_args": ["p"]})")),
              HasSubstr("field 'pytree': in_spec is missing"));
  EXPECT_THAT(
      parse_error(with_pytree(
          R"({"orig_args": ["p"], "in_spec": {"type": "set", "children": []}})")),
      HasSubstr("field 'pytree' in_spec: type must be tuple"));
  EXPECT_THAT(parse_error(with_pytree(
                  R"({"orig_args": ["p"], "in_spec": {"type": "tuple",
                      "children": [{"type": "dict", "context": ["a"],
                                    "children": []}]}})")),
              HasSubstr("field 'pytree' in_spec.children[0]: TreeSpec: 1 keys "
                        "for 0 children"));
  EXPECT_THAT(parse_error(with_pytree(
                  R"({"orig_args": ["p"], "in_spec": {"type": "namedtuple",
                      "context": {"class": "m.P"}, "children": []}})")),
              HasSubstr("a namedtuple's context is"));
  EXPECT_THAT(parse_error(with_pytree(
                  R"({"orig_args": ["p"], "in_spec": {"type": "dict",
                      "context": [[1]], "children": ["*"]}})")),
              HasSubstr("pytree field 'in_spec.context[0]': a key must be"));
  EXPECT_THAT(parse_error(with_pytree(
                  R"({"orig_args": ["p"], "in_spec": "*", "extra": 1})")),
              HasSubstr("field 'pytree': unknown entry 'extra'"));
}

}  // namespace
}  // namespace fx
