#include "tests/testing/python.h"

#include <cstdlib>
#include <stdexcept>

#include "tests/testing/reference.h"

namespace fx::testing {

std::string runfile(const std::string& path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  if (srcdir == nullptr) return path;
  return std::string(srcdir) + "/fx_sdk/" + path;
}

bool have_python_torch(bool torchvision) {
  static const bool torch = std::system(
                                "/usr/bin/python3 -c 'import torch' "
                                ">/dev/null 2>&1") == 0;
  static const bool vision =
      torch && std::system(
                   "/usr/bin/python3 -c 'import torchvision' "
                   ">/dev/null 2>&1") == 0;
  return torchvision ? vision : torch;
}

std::string run_python(const std::string& script,
                       const std::vector<std::string>& args) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  static int calls = 0;
  std::string base = std::string(tmp ? tmp : "/tmp") + "/run_python." +
                     std::to_string(++calls);
  std::string command = "/usr/bin/python3 '" + runfile(script) + "'";
  for (const std::string& a : args) command += " '" + a + "'";
  command += " >" + base + ".out 2>" + base + ".err";
  int status = std::system(command.c_str());
  if (status != 0) {
    throw std::runtime_error(script + " failed (status " +
                             std::to_string(status) + "):\n" +
                             read_file(base + ".err"));
  }
  return read_file(base + ".out");
}

}  // namespace fx::testing
