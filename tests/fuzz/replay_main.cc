// The main of a fuzz target built without libFuzzer (GCC, or GCC with
// ASan/UBSan under --config=asan): runs LLVMFuzzerTestOneInput once on each
// file named, and on every file under each directory named, in name order.
// Arguments starting with '-' are libFuzzer's flags and are ignored, so one
// command line (replay_test.sh) drives either build. Fails when there is no
// input at all; a crash or sanitizer report ends the process as it would
// under libFuzzer.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc,
                                                          char*** argv);

namespace {

namespace fs = std::filesystem;

// The files `arg` names (itself, or the regular files under it, sorted).
std::vector<fs::path> inputs_of(const fs::path& arg) {
  if (!fs::is_directory(arg)) return {arg};
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(arg)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool replay(const fs::path& file, size_t* bytes) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
    return false;
  }
  std::vector<char> data((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  *bytes += data.size();
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()),
                         data.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  auto start = std::chrono::steady_clock::now();
  size_t count = 0;
  size_t bytes = 0;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    if (!fs::exists(argv[i])) {
      std::fprintf(stderr, "replay: %s does not exist\n", argv[i]);
      return 1;
    }
    for (const fs::path& file : inputs_of(argv[i])) {
      if (!replay(file, &bytes)) return 1;
      ++count;
    }
  }
  if (count == 0) {
    std::fprintf(stderr, "replay: no input given\n");
    return 1;
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("replay: %zu inputs (%zu bytes) in %.2f s, no crash\n", count,
              bytes, seconds);
  return 0;
}
