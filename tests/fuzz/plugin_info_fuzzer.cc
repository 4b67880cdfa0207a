// Fuzz target: the plugin-info validator (fx::host::check_plugin_info, then
// Plugin::from_info and PassRegistry::add, as a loaded plugin goes). The
// bytes build a fake FxPluginInfo: names and strings (or NULL), versions and
// declared sizes, passes at the declared stride with options and name lists
// (counts, NULL arrays, NULL or empty entries, option types outside the
// enum). The memory it describes is real, as a plugin's static data is: the
// validator may trust what a pointer and a count say, nothing else.
// The bytes left over are a pipeline text whose passes are looked up and
// whose options are bound against the fake schemas (bind_pass_options).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fx/plugin_api.h"
#include "host/loader/plugin_loader.h"
#include "host/options/pass_options.h"
#include "host/pipeline/pass_registry.h"
#include "host/pipeline/pipeline.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

// Takes values from the front of the input; zeros once it is used up.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = v << 8 | byte();
    return v;
  }
  // A length-prefixed string (at most 31 bytes, any content).
  std::string text() {
    size_t n = std::min<size_t>(byte() % 32, size_ - std::min(at_, size_));
    std::string s(reinterpret_cast<const char*>(data_) + at_, n);
    at_ += n;
    return s;
  }
  std::string_view rest() const {
    return at_ < size_
               ? std::string_view(reinterpret_cast<const char*>(data_) + at_,
                                  size_ - at_)
               : std::string_view();
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

FxStatus* fake_run(const FxApi*, FxGraph*, const FxOptions*, void*, int*) {
  return nullptr;
}

// Owns everything the fake declaration points at.
class FakePlugin {
 public:
  explicit FakePlugin(Bytes& in) : in_(in) {
    info_.name = string_or_null();
    info_.version = string_or_null();
    info_.api_version = version();
    info_.min_api_version = version();
    info_.struct_size = size_choice(sizeof(FxPluginInfo));
    info_.pass_info_size = size_choice(sizeof(FxPassInfo));
    info_.num_passes = in_.byte() % 4;
    // A declared size, else the FxPassInfo of the header of api_version:
    // version 6 appended tolerance and idempotent to version 1's fields.
    size_t header_size = info_.api_version >= 6
                             ? sizeof(FxPassInfo)
                             : offsetof(FxPassInfo, tolerance);
    size_t stride = info_.api_version >= 2 && info_.pass_info_size != 0
                        ? info_.pass_info_size
                        : header_size;
    if (info_.num_passes > 0 && in_.byte() % 8 != 0) {
      // A stride below version 1's FxPassInfo is refused before any pass
      // is read; below sizeof(FxPassInfo) the passes overlap, the last one
      // whole.
      pass_memory_.assign((info_.num_passes - 1) * stride + sizeof(FxPassInfo),
                          0);
      for (size_t p = 0; p < info_.num_passes; ++p) {
        FxPassInfo pass = make_pass();
        std::memcpy(pass_memory_.data() + p * stride, &pass, sizeof(pass));
      }
      info_.passes = reinterpret_cast<const FxPassInfo*>(pass_memory_.data());
    }
  }
  const FxPluginInfo* info() const { return &info_; }

 private:
  const char* string_or_null() {
    if (in_.byte() % 8 == 0) return nullptr;
    return strings_.emplace_back(in_.text()).c_str();
  }
  uint32_t version() {
    uint8_t b = in_.byte();
    return b < 250 ? b % (FX_API_VERSION + 2) : in_.u32();
  }
  // 0, the right size, or anything (kept below 4 KiB above the right size:
  // the fake only has that much memory behind each pass).
  uint32_t size_choice(uint32_t right) {
    switch (in_.byte() % 4) {
      case 0:
        return 0;
      case 1:
        return right;
      default:
        return in_.u32() % (right + 4096);
    }
  }
  FxNameList names() {
    FxNameList list{nullptr, static_cast<size_t>(in_.byte() % 3)};
    if (list.count > 0 && in_.byte() % 8 != 0) {
      auto& array = name_arrays_.emplace_back();
      for (size_t i = 0; i < list.count; ++i) {
        array.push_back(string_or_null());
      }
      list.names = array.data();
    }
    return list;
  }
  FxPassInfo make_pass() {
    FxPassInfo pass{};
    pass.name = string_or_null();
    pass.description = string_or_null();
    pass.run = in_.byte() % 8 == 0 ? nullptr : fake_run;
    pass.num_options = in_.byte() % 4;
    if (pass.num_options > 0 && in_.byte() % 8 != 0) {
      auto& options = option_arrays_.emplace_back(pass.num_options);
      for (FxOptionSpec& option : options) {
        option.name = string_or_null();
        int type = static_cast<int8_t>(in_.byte()) % 7;  // -6 .. 6
        std::memcpy(&option.type, &type, sizeof(type));
        option.default_value = string_or_null();
        option.description = string_or_null();
      }
      pass.options = options.data();
    }
    pass.run_after = names();
    pass.run_before = names();
    pass.required = names();
    pass.produces = names();
    pass.invalidates = names();
    // Version 6: any bit pattern of tolerance (negative, NaN, inf) and flag.
    uint64_t rtol = uint64_t{in_.u32()} << 32 | in_.u32();
    uint64_t atol = uint64_t{in_.u32()} << 32 | in_.u32();
    std::memcpy(&pass.tolerance.rtol, &rtol, sizeof(rtol));
    std::memcpy(&pass.tolerance.atol, &atol, sizeof(atol));
    pass.idempotent = static_cast<int32_t>(in_.u32());
    return pass;
  }

  Bytes& in_;
  FxPluginInfo info_{};
  std::vector<unsigned char> pass_memory_;
  std::deque<std::string> strings_;
  std::deque<std::vector<const char*>> name_arrays_;
  std::deque<std::vector<FxOptionSpec>> option_arrays_;
};

// Looks up the passes of `text` and binds their options, as a pipeline run
// does before anything runs.
void bind_pipeline(const fx::host::PassRegistry& registry,
                   std::string_view text) {
  auto spec = fx::host::parse_pipeline_text(text);
  if (!spec.ok()) return;
  for (const fx::host::PassInvocation& invocation : spec->passes) {
    auto pass = registry.lookup(invocation.pass);
    fx::fuzz::require_message(pass.status());
    if (!pass.ok()) continue;
    auto options =
        fx::host::bind_pass_options(*(*pass)->info, invocation.options);
    fx::fuzz::require_message(options.status());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  FakePlugin fake(in);
  auto plugin = fx::host::Plugin::from_info(fake.info(), "<fuzz>");
  fx::fuzz::require_message(plugin.status());
  if (!plugin.ok()) return 0;
  fx::host::PassRegistry registry;
  absl::Status added = registry.add(*plugin);
  fx::fuzz::require_message(added);
  if (!added.ok()) return 0;
  bind_pipeline(registry, in.rest());
  return 0;
}
