#include "tests/testing/reference.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fx::testing {

std::string reference_dir() {
  namespace fs = std::filesystem;
  std::vector<std::string> candidates;
  if (const char* srcdir = std::getenv("TEST_SRCDIR")) {
    candidates.push_back(std::string(srcdir) + "/shared/reference");
    candidates.push_back(std::string(srcdir) +
                         "/fx_sdk/external/shared/reference");
  }
  candidates.push_back("external/shared/reference");
  candidates.push_back("../shared/reference");
  for (const std::string& c : candidates) {
    std::error_code ec;
    if (fs::is_directory(c, ec)) return c;
  }
  return "";
}

std::vector<std::string> reference_cases() {
  std::vector<std::string> out;
  std::string dir = reference_dir();
  if (dir.empty()) return out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_directory()) out.push_back(entry.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace fx::testing
