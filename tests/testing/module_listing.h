// A module tree's attributes as text, for suites comparing what a module
// holds (and in which order) with torch's: "module NAME" for each submodule
// (named_modules' order), then "parameter NAME", then "buffer NAME", one a
// line, qualified names.
#ifndef TESTS_TESTING_MODULE_LISTING_H_
#define TESTS_TESTING_MODULE_LISTING_H_

#include <torch/nn/module.h>

#include <string>

namespace fx::testing {

inline std::string attribute_listing(const torch::nn::Module& m) {
  std::string out;
  for (const auto& sub : m.named_modules("", /*include_self=*/false)) {
    out += "module " + sub.key() + "\n";
  }
  for (const auto& p : m.named_parameters())
    out += "parameter " + p.key() + "\n";
  for (const auto& b : m.named_buffers()) out += "buffer " + b.key() + "\n";
  return out;
}

}  // namespace fx::testing

#endif  // TESTS_TESTING_MODULE_LISTING_H_
