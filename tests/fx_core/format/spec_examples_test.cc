// Keeps the format's specification (docs/fx-graph-json.md) honest: every
// complete example file in it, a ```json block on the line after an
// `<!-- example: valid -->` or `<!-- example: invalid: TEXT -->` line, is
// loaded with the SDK's reader (parse_graph_json). A valid one must load,
// and writing it and reading that back must give the same graph (its text
// and code) and the same bytes; an invalid one must be refused with an
// error containing TEXT. The document must hold valid and invalid examples
// (at least four of the latter), so the test never passes on a document that
// has lost them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "fx_core/format/graph_json.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"

namespace fx {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kDocument[] = "docs/fx-graph-json.md";
constexpr std::string_view kMarker = "<!-- example";
constexpr std::string_view kMarkerOpen = "<!-- example: ";
constexpr std::string_view kMarkerClose = " -->";
constexpr std::string_view kInvalid = "invalid: ";

// One complete example file of the document.
struct Example {
  size_t line = 0;       // the marker's line, from 1
  bool valid = true;     // else the reader must refuse it
  std::string expected;  // invalid: a substring of the reader's error
  std::string json;
};

// The document's examples, and the markers it holds that are not followed
// by an example or that say neither valid nor invalid.
struct Document {
  bool read = false;
  std::vector<Example> examples;
  std::vector<std::string> problems;
};

// The document in the test's runfiles, or relative to the current
// directory outside Bazel.
std::string document_path() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  if (srcdir == nullptr) return kDocument;
  return std::string(srcdir) + "/fx_sdk/" + kDocument;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

std::string where(size_t line) {
  return std::string(kDocument) + ":" + std::to_string(line);
}

// Reads what a marker line says into `example`; false when it is neither
// `valid` nor `invalid: TEXT`.
bool read_marker(std::string_view line, Example* example) {
  if (!starts_with(line, kMarkerOpen) || !ends_with(line, kMarkerClose)) {
    return false;
  }
  std::string_view kind =
      line.substr(kMarkerOpen.size(),
                  line.size() - kMarkerOpen.size() - kMarkerClose.size());
  if (kind == "valid") return true;
  if (!starts_with(kind, kInvalid) || kind.size() == kInvalid.size()) {
    return false;
  }
  example->valid = false;
  example->expected = std::string(kind.substr(kInvalid.size()));
  return true;
}

// Reads the ```json block opening at lines[open] into `example`; returns
// the index of its closing fence, or lines.size() when it has none.
size_t read_block(const std::vector<std::string>& lines, size_t open,
                  Example* example) {
  size_t i = open + 1;
  for (; i < lines.size() && lines[i] != "```"; ++i) {
    example->json += lines[i];
    example->json += '\n';
  }
  return i;
}

// The example whose marker is lines[marker], added to `doc`, or a problem;
// returns the index of the last line it used.
size_t read_example(const std::vector<std::string>& lines, size_t marker,
                    Document* doc) {
  Example example;
  example.line = marker + 1;
  if (!read_marker(lines[marker], &example)) {
    doc->problems.push_back(where(example.line) +
                            ": a marker that says neither 'valid' nor "
                            "'invalid: TEXT'");
    return marker;
  }
  if (marker + 1 >= lines.size() || lines[marker + 1] != "```json") {
    doc->problems.push_back(where(example.line) +
                            ": the marker is not followed by a ```json block");
    return marker;
  }
  size_t close = read_block(lines, marker + 1, &example);
  if (close == lines.size()) {
    doc->problems.push_back(where(example.line) +
                            ": the ```json block is not closed");
  } else {
    doc->examples.push_back(std::move(example));
  }
  return close;
}

Document read_document() {
  Document doc;
  std::ifstream in(document_path());
  if (!in) return doc;
  doc.read = true;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (starts_with(lines[i], kMarker)) i = read_example(lines, i, &doc);
  }
  return doc;
}

// How a failure shows an example: its place in the document.
void PrintTo(const Example& example, std::ostream* os) {
  *os << where(example.line);
}

const Document& document() {
  static const Document* doc = new Document(read_document());
  return *doc;
}

TEST(SpecDocument, HoldsValidAndInvalidExamples) {
  const Document& doc = document();
  ASSERT_TRUE(doc.read) << "cannot read " << document_path();
  EXPECT_THAT(doc.problems, IsEmpty());
  size_t valid = 0, invalid = 0;
  for (const Example& example : doc.examples) {
    ++(example.valid ? valid : invalid);
  }
  EXPECT_GE(valid, 1u);
  EXPECT_GE(invalid, 4u);
}

class SpecExample : public ::testing::TestWithParam<Example> {};

TEST_P(SpecExample, LoadsAsDocumented) {
  const Example& example = GetParam();
  const std::string source = where(example.line);
  absl::StatusOr<GraphFile> file = parse_graph_json(example.json, source);
  if (!example.valid) {
    ASSERT_FALSE(file.ok()) << source << ": a refused example loads";
    EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(file.status().message()),
                HasSubstr(example.expected));
    return;
  }
  ASSERT_TRUE(file.ok()) << file.status().message();
  const std::string written = to_graph_json(*file);
  absl::StatusOr<GraphFile> again = parse_graph_json(written, source);
  ASSERT_TRUE(again.ok()) << again.status().message() << "\n" << written;
  EXPECT_EQ(again->graph->str(), file->graph->str());
  EXPECT_EQ(again->graph->python_code("self").src,
            file->graph->python_code("self").src);
  EXPECT_EQ(to_graph_json(*again), written);
}

std::string example_name(const ::testing::TestParamInfo<Example>& info) {
  return "line_" + std::to_string(info.param.line) +
         (info.param.valid ? "_valid" : "_invalid");
}

INSTANTIATE_TEST_SUITE_P(Document, SpecExample,
                         ::testing::ValuesIn(document().examples),
                         example_name);

}  // namespace
}  // namespace fx
