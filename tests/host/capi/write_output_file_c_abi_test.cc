// WriteOutputFile (C ABI version 13): a file a pass writes goes through the
// host's one output rule (fx_core/io/output_rule.h).
//  - With the running command's inputs published (FilesRead::publish, as
//    the `fx` commands do), a path that is one of them (the graph, its
//    weights; any spelling of them, a hard link, a symlink) is refused with
//    FX_INVALID_ARGUMENT naming the path and the input, which is left byte
//    for byte as it was; other paths are written.
//  - With nothing published (fx_sdk.run_pipeline from Python) it just
//    writes: atomically, bytes as given (NULs included), a replaced file
//    keeps its permission bits, no temporary left behind.
//  - NULL / empty arguments and what is not a regular file are refused;
//    tables older than 13 lack it and fxp::write_output_file says so.
//  - The first-party plugins' fx_plugins::write_file_atomically (dot's path,
//    splitter's report) goes through it on a host of version 13 and writes
//    the file itself (mkstemp, renamed) on an older one.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "fx/plugin_api.hpp"
#include "fx_core/io/output_rule.h"
#include "host/capi/c_api.h"
#include "plugins/common/plugin_util.h"

namespace fx::host {
namespace {

namespace fs = std::filesystem;

class WriteOutputFileCAbi : public ::testing::Test {
 protected:
  void SetUp() override {
    fxp::api() = api();
    dir_ = fs::path(::testing::TempDir()) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    fxp::api() = api();
    fs::remove_all(dir_);
  }

  std::string path(const std::string& name) const {
    return (dir_ / name).string();
  }

  static std::string read(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  static void put(const std::string& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary) << bytes;
  }

  size_t files_in_dir() const {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++n;
    return n;
  }

  static StatusText write(const std::string& p, const std::string& bytes) {
    return take_status(
        api()->WriteOutputFile(p.c_str(), bytes.data(), bytes.size()));
  }

  fs::path dir_;
};

TEST_F(WriteOutputFileCAbi, WithoutACommandItWritesAtomically) {
  const std::string out = path("report.txt");
  const std::string bytes("a\0b\n", 4);
  StatusText s = write(out, bytes);
  EXPECT_EQ(s.code, FX_OK) << s.message;
  EXPECT_EQ(read(out), bytes);
  // Replacing keeps the file's permission bits and leaves no temporary.
  ASSERT_EQ(::chmod(out.c_str(), 0600), 0);
  s = write(out, "second");
  EXPECT_EQ(s.code, FX_OK) << s.message;
  EXPECT_EQ(read(out), "second");
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(files_in_dir(), 1u);
  // An empty file; data may be NULL then.
  EXPECT_EQ(take_status(api()->WriteOutputFile(out.c_str(), nullptr, 0)).code,
            FX_OK);
  EXPECT_EQ(read(out), "");
}

TEST_F(WriteOutputFileCAbi, AFileTheCommandReadsIsRefusedAndKept) {
  const std::string graph = path("g.fx.json");
  const std::string weights = path("g.weights.pt");
  put(graph, "{\"graph\": 1}");
  put(weights, "weights");
  FilesRead reads;
  reads.add(graph, "the graph");
  reads.add(weights, "the weights of " + graph);
  {
    const FilesRead::Published published = reads.publish();
    StatusText s = write(graph, "digraph {}");
    EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
    EXPECT_EQ(s.message, "WriteOutputFile: the pass's output file " + graph +
                             " would overwrite " + graph +
                             " (the graph), which this command reads; write "
                             "the output elsewhere");
    s = write(weights, "report");
    EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
    EXPECT_EQ(s.message, "WriteOutputFile: the pass's output file " + weights +
                             " would overwrite " + weights +
                             " (the weights of " + graph +
                             "), which this command reads; write the output "
                             "elsewhere");
    // Other spellings of the same files: a `./` path, a symlink, a hard link.
    const std::string dotted = (dir_ / "." / "g.fx.json").string();
    EXPECT_EQ(write(dotted, "x").code, FX_INVALID_ARGUMENT);
    fs::create_symlink(graph, path("link.fx.json"));
    s = write(path("link.fx.json"), "x");
    EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
    EXPECT_NE(s.message.find("would overwrite " + graph + " (the graph)"),
              std::string::npos)
        << s.message;
    fs::create_hard_link(weights, path("hard.pt"));
    EXPECT_EQ(write(path("hard.pt"), "x").code, FX_INVALID_ARGUMENT);
    EXPECT_EQ(read(graph), "{\"graph\": 1}");
    EXPECT_EQ(read(weights), "weights");
    EXPECT_EQ(files_in_dir(), 4u);  // no temporary left behind
    // A file the command does not read is written.
    s = write(path("g.dot"), "digraph {}");
    EXPECT_EQ(s.code, FX_OK) << s.message;
    EXPECT_EQ(read(path("g.dot")), "digraph {}");
    // Through the C++ wrapper: an fxp::Error with the host's message.
    try {
      fxp::write_output_file(graph, "digraph {}");
      ADD_FAILURE() << "the graph was overwritten";
    } catch (const fxp::Error& e) {
      EXPECT_EQ(e.code(), FX_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find(" (the graph), which this command "
                                           "reads"),
                std::string::npos)
          << e.what();
    }
    fxp::write_output_file(path("g2.dot"), std::string("x\0y", 3));
    EXPECT_EQ(read(path("g2.dot")), std::string("x\0y", 3));
    EXPECT_EQ(read(graph), "{\"graph\": 1}");
  }
  // The command is over: nothing is published any more.
  EXPECT_EQ(write(graph, "new").code, FX_OK);
  EXPECT_EQ(read(graph), "new");
}

TEST_F(WriteOutputFileCAbi, PublishingNestsAndRestores) {
  const std::string a = path("a.fx.json");
  const std::string b = path("b.fx.json");
  FilesRead outer;
  outer.add(a, "the graph");
  FilesRead inner;
  inner.add(b, "the graph");
  const FilesRead::Published first = outer.publish();
  {
    const FilesRead::Published second = inner.publish();
    EXPECT_EQ(write(a, "x").code, FX_OK);
    EXPECT_EQ(write(b, "x").code, FX_INVALID_ARGUMENT);
  }
  EXPECT_EQ(write(a, "y").code, FX_INVALID_ARGUMENT);
  EXPECT_EQ(write(b, "y").code, FX_OK);
  EXPECT_EQ(read(a), "x");
}

TEST_F(WriteOutputFileCAbi, BadArgumentsAreRefused) {
  StatusText s = take_status(api()->WriteOutputFile(nullptr, "x", 1));
  EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
  EXPECT_EQ(s.message, "WriteOutputFile: path must not be NULL");
  s = take_status(api()->WriteOutputFile("", "x", 1));
  EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
  EXPECT_EQ(s.message, "WriteOutputFile: path must not be empty");
  const std::string out = path("x.txt");
  s = take_status(api()->WriteOutputFile(out.c_str(), nullptr, 3));
  EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
  EXPECT_EQ(s.message, "WriteOutputFile: data must not be NULL (size 3)");
  EXPECT_FALSE(fs::exists(out));
  // A directory is not replaced.
  fs::create_directories(path("sub"));
  s = write(path("sub"), "x");
  EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
  EXPECT_EQ(s.message, "WriteOutputFile: " + path("sub") +
                           ": not a regular file; refusing to replace it");
  EXPECT_TRUE(fs::is_directory(path("sub")));
  // A directory that does not exist: the caller's argument, named.
  s = write(path("missing/x.txt"), "x");
  EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
  EXPECT_NE(s.message.find(path("missing/x.txt")), std::string::npos)
      << s.message;
}

TEST_F(WriteOutputFileCAbi, OlderTablesLackIt) {
  EXPECT_EQ(api(12)->WriteOutputFile, nullptr);
  EXPECT_NE(api(13)->WriteOutputFile, nullptr);
  fxp::api() = api(12);
  try {
    fxp::write_output_file(path("x.txt"), "x");
    ADD_FAILURE() << "no error on a version-12 table";
  } catch (const fxp::Error& e) {
    EXPECT_EQ(e.code(), FX_UNIMPLEMENTED);
    EXPECT_EQ(std::string(e.what()),
              "WriteOutputFile needs fx plugin API version 13, but the "
              "host's table is version 12 (use a newer fx host)");
  }
  EXPECT_FALSE(fs::exists(path("x.txt")));
}

TEST_F(WriteOutputFileCAbi, ThePluginsHelperUsesItFromVersion13) {
  const std::string graph = path("g.fx.json");
  put(graph, "graph");
  FilesRead reads;
  reads.add(graph, "the graph");
  const FilesRead::Published published = reads.publish();
  try {
    fx_plugins::write_file_atomically(graph, "digraph {}");
    ADD_FAILURE() << "the graph was overwritten";
  } catch (const fxp::Error& e) {
    EXPECT_EQ(e.code(), FX_INVALID_ARGUMENT);
    EXPECT_EQ(std::string(e.what()),
              "WriteOutputFile: the pass's output file " + graph +
                  " would overwrite " + graph +
                  " (the graph), which this command reads; write the output "
                  "elsewhere");
  }
  EXPECT_EQ(read(graph), "graph");
  fx_plugins::write_file_atomically(path("g.dot"), "digraph {}");
  EXPECT_EQ(read(path("g.dot")), "digraph {}");
  // A version-12 host has no WriteOutputFile: the helper writes the file
  // itself, as before (the rule cannot be asked).
  fxp::api() = api(12);
  fx_plugins::write_file_atomically(path("old.dot"), "digraph {}");
  EXPECT_EQ(read(path("old.dot")), "digraph {}");
  EXPECT_EQ(files_in_dir(), 3u);
}

}  // namespace
}  // namespace fx::host
