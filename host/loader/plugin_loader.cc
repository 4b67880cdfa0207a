#include "host/loader/plugin_loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <boost/dll/shared_library.hpp>
#include <boost/filesystem.hpp>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "fx_core/support/strings.h"
#include "host/loader/elf_check.h"
#include "host/loader/sha256.h"
#include "host/options/pass_options.h"

namespace fx::host {

struct Plugin::Library {
  boost::dll::shared_library handle;
};

Plugin::~Plugin() = default;

std::string Plugin::describe() const {
  return cat("plugin '", name(), "' (", path_.empty() ? "built in" : path_,
             ")");
}

namespace {

bool is_identifier(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(c) && c != '_' && c != '.' && c != '-') {
      return false;
    }
  }
  return true;
}

absl::Status check_names(const FxNameList& list, std::string_view what,
                         std::string_view where) {
  if (list.count > 0 && list.names == nullptr) {
    return absl::InvalidArgumentError(
        cat(where, ": ", what, " has ", list.count, " names but no array"));
  }
  for (size_t i = 0; i < list.count; ++i) {
    if (list.names[i] == nullptr || *list.names[i] == '\0') {
      return absl::InvalidArgumentError(
          cat(where, ": ", what, "[", i, "] is empty"));
    }
  }
  return absl::OkStatus();
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = absl::ascii_tolower(c);
  return out;
}

}  // namespace

namespace {

// FxPassInfo's fields of version 1, which every plugin has (version 6
// appended `tolerance` and `idempotent`).
constexpr size_t kPassInfoV1Size = offsetof(FxPassInfo, tolerance);
// The end of the version-6 fields (without the struct's tail padding).
constexpr size_t kPassInfoV6End =
    offsetof(FxPassInfo, idempotent) + sizeof(int32_t);
// The FxPluginInfo fields of version 2 end with pass_info_size.
constexpr size_t kPluginInfoV2Size =
    offsetof(FxPluginInfo, pass_info_size) + sizeof(uint32_t);

// sizeof(FxPassInfo) in the header of `api_version` (plugin_api.h).
size_t pass_info_size_of_version(uint32_t api_version) {
  return api_version >= 6 ? sizeof(FxPassInfo) : kPassInfoV1Size;
}

// The stride of `passes`: what the plugin declared, or its header's size.
size_t pass_stride(const FxPluginInfo& info) {
  if (info.api_version >= 2 && info.pass_info_size != 0) {
    return info.pass_info_size;
  }
  return pass_info_size_of_version(info.api_version);
}

// Whether the plugin's FxPassInfo has the fields of version 6.
bool has_v6_pass_fields(const FxPluginInfo& info) {
  return info.api_version >= 6 && pass_stride(info) >= kPassInfoV6End;
}

// The declared sizes (plugin_loader.h), for api_version >= 2 only: a
// version-1 plugin's FxPluginInfo ends before them.
absl::Status check_sizes(const FxPluginInfo& info, const std::string& who) {
  if (info.api_version < 2) return absl::OkStatus();
  const char* fix =
      ". Fix: set struct_size = sizeof(FxPluginInfo) and pass_info_size = "
      "sizeof(FxPassInfo) (FXP_PLUGIN does)";
  if (info.struct_size != 0 && info.struct_size < kPluginInfoV2Size) {
    return absl::InvalidArgumentError(
        cat(who, " declares struct_size ", info.struct_size,
            ", smaller than the FxPluginInfo of API version 2 (",
            kPluginInfoV2Size, " bytes)", fix));
  }
  if (info.pass_info_size != 0 && info.pass_info_size < kPassInfoV1Size) {
    return absl::InvalidArgumentError(
        cat(who, " declares pass_info_size ", info.pass_info_size,
            ", smaller than the FxPassInfo of API version 1 (", kPassInfoV1Size,
            " bytes)", fix));
  }
  // A stride that is not a multiple of the alignment cannot come from a C
  // array (sizeof always is one), and would read passes misaligned.
  if (info.pass_info_size % alignof(FxPassInfo) != 0) {
    return absl::InvalidArgumentError(
        cat(who, " declares pass_info_size ", info.pass_info_size,
            ", not a multiple of FxPassInfo's alignment (", alignof(FxPassInfo),
            " bytes)", fix));
  }
  if (info.api_version > FX_API_VERSION && info.pass_info_size == 0 &&
      info.num_passes > 1) {
    return absl::InvalidArgumentError(
        cat(who, " was built against fx plugin API version ", info.api_version,
            ", newer than this host's ", FX_API_VERSION,
            ", and does not declare pass_info_size, so its passes cannot be "
            "found",
            fix));
  }
  return absl::OkStatus();
}

// The version handshake (plugin_loader.h); `who` names the plugin.
absl::Status check_handshake(const FxPluginInfo& info, const std::string& who) {
  if (info.api_version == 0 || info.min_api_version == 0 ||
      info.min_api_version > info.api_version) {
    return absl::InvalidArgumentError(
        cat(who, " declares api_version ", info.api_version,
            " and min_api_version ", info.min_api_version,
            "; both must be at least 1 and min_api_version <= api_version (set "
            "them to FX_API_VERSION from fx/plugin_api.h)"));
  }
  if (info.min_api_version > FX_API_VERSION) {
    return absl::FailedPreconditionError(
        cat(who, " requires fx plugin API version ", info.min_api_version,
            " or later, but this host provides version ", FX_API_VERSION,
            ". Fix: use an fx host that provides API version ",
            info.min_api_version,
            ", or rebuild the plugin with min_api_version "
            "<= ",
            FX_API_VERSION));
  }
  if (info.api_version < kOldestSupportedPluginApiVersion) {
    return absl::FailedPreconditionError(
        cat(who, " was built against fx plugin API version ", info.api_version,
            ", older than the oldest this host supports (",
            kOldestSupportedPluginApiVersion,
            "). Fix: rebuild the plugin against "
            "the fx/plugin_api.h of this host (API version ",
            FX_API_VERSION, ")"));
  }
  return absl::OkStatus();
}

// The option's type as the int the plugin stored. A C enum holds any int,
// but loading one outside FxOptionType's range as the enum is undefined in
// C++ (UBSan: "not a valid value for type 'FxOptionType'").
int stored_option_type(const FxOptionSpec& spec) {
  static_assert(sizeof(FxOptionType) == sizeof(int));
  int type;
  std::memcpy(&type, &spec.type, sizeof(type));
  return type;
}

// Option `o` of a pass: a unique name, a known type, a default of that type.
absl::Status check_option(const FxOptionSpec& spec, size_t o,
                          const std::string& where,
                          std::set<std::string_view>& names) {
  if (spec.name == nullptr || !is_identifier(spec.name)) {
    return absl::InvalidArgumentError(
        cat(where, ": option ", o, " needs a name"));
  }
  if (!names.insert(spec.name).second) {
    return absl::InvalidArgumentError(
        cat(where, ": declares option '", spec.name, "' twice"));
  }
  int type = stored_option_type(spec);
  if (type < FX_OPTION_BOOL || type > FX_OPTION_STRING_LIST) {
    return absl::InvalidArgumentError(
        cat(where, ": option '", spec.name, "' has unknown type ", type));
  }
  OptionValue value;
  absl::Status parsed = parse_option_text(
      spec.type, spec.default_value ? spec.default_value : "", &value);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        cat(where, ": the default of option '", spec.name, "' is not a valid ",
            option_type_name(spec.type), ": ", std::string(parsed.message())));
  }
  return absl::OkStatus();
}

// `value` in its shortest round-trip form ("0.0001", "1e-06", "nan"):
// fx::cat takes no floating-point numbers.
std::string number_text(double value) {
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, res.ptr);
}

// The version-6 declarations of a pass (`where`): a finite, non-negative
// tolerance and an idempotent flag of 0 or 1.
absl::Status check_declarations(const PassDeclaration& declared,
                                int32_t idempotent, const std::string& where) {
  for (auto [value, what] : {std::pair{declared.tolerance.rtol, "rtol"},
                             {declared.tolerance.atol, "atol"}}) {
    if (!std::isfinite(value) || value < 0) {
      return absl::InvalidArgumentError(cat(
          where, ": its tolerance declares ", what, " = ", number_text(value),
          "; it must be a finite number >= 0 (0 and 0: none declared)"));
    }
  }
  if (idempotent != 0 && idempotent != 1) {
    return absl::InvalidArgumentError(
        cat(where, ": idempotent is ", idempotent, "; it must be 0 or 1"));
  }
  return absl::OkStatus();
}

// Pass `p` of the plugin `who`: a unique name, a run function, its options
// and name lists; `names` are the pass names seen so far.
absl::Status check_pass(const FxPluginInfo& info, size_t p,
                        const std::string& who,
                        std::set<std::string_view>& names) {
  const FxPassInfo& pass = plugin_pass(info, p);
  if (pass.name == nullptr || !is_identifier(pass.name)) {
    return absl::InvalidArgumentError(
        cat(who, ": pass ", p,
            " needs a name of letters, digits, '_', '.' or '-'"));
  }
  std::string where = cat(who, ", pass '", pass.name, "'");
  if (!names.insert(pass.name).second) {
    return absl::InvalidArgumentError(
        cat(who, " declares pass '", pass.name, "' twice"));
  }
  if (pass.run == nullptr) {
    return absl::InvalidArgumentError(cat(where, ": its run function is NULL"));
  }
  if (pass.num_options > 0 && pass.options == nullptr) {
    return absl::InvalidArgumentError(
        cat(where, ": declares options but no array"));
  }
  std::set<std::string_view> option_names;
  for (size_t o = 0; o < pass.num_options; ++o) {
    absl::Status s = check_option(pass.options[o], o, where, option_names);
    if (!s.ok()) return s;
  }
  for (auto [list, what] : {std::pair{&pass.run_after, "run_after"},
                            {&pass.run_before, "run_before"},
                            {&pass.required, "required"},
                            {&pass.produces, "produces"},
                            {&pass.invalidates, "invalidates"}}) {
    absl::Status s = check_names(*list, what, where);
    if (!s.ok()) return s;
  }
  if (!has_v6_pass_fields(info)) return absl::OkStatus();
  return check_declarations(pass_declaration(info, pass), pass.idempotent,
                            where);
}

}  // namespace

const FxPassInfo& plugin_pass(const FxPluginInfo& info, size_t index) {
  const char* base = reinterpret_cast<const char*>(info.passes);
  return *reinterpret_cast<const FxPassInfo*>(base + index * pass_stride(info));
}

const FxPassInfo& Plugin::pass(size_t index) const {
  return plugin_pass(*info_, index);
}

PassDeclaration pass_declaration(const FxPluginInfo& info,
                                 const FxPassInfo& pass) {
  PassDeclaration declared;
  if (!has_v6_pass_fields(info)) return declared;
  declared.tolerance = pass.tolerance;
  declared.idempotent = pass.idempotent == 1;
  return declared;
}

PassDeclaration Plugin::declaration(size_t index) const {
  return pass_declaration(*info_, pass(index));
}

absl::Status check_plugin_info(const FxPluginInfo* info,
                               std::string_view origin) {
  if (info == nullptr) {
    return absl::InvalidArgumentError(
        cat("plugin ", origin, ": fx_plugin_get_info returned NULL"));
  }
  std::string who =
      cat("plugin '", info->name ? info->name : "", "' (", origin, ")");
  if (info->name == nullptr || !is_identifier(info->name)) {
    return absl::InvalidArgumentError(
        cat("plugin ", origin,
            ": its name must be non-empty letters, digits, '_', '.' or '-'"));
  }
  absl::Status handshake = check_handshake(*info, who);
  if (handshake.ok()) handshake = check_sizes(*info, who);
  if (!handshake.ok()) return handshake;
  if (info->num_passes > 0 && info->passes == nullptr) {
    return absl::InvalidArgumentError(
        cat(who, " declares ", info->num_passes, " passes but no array"));
  }
  std::set<std::string_view> names;
  for (size_t p = 0; p < info->num_passes; ++p) {
    absl::Status s = check_pass(*info, p, who, names);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const Plugin>> Plugin::from_info(
    const FxPluginInfo* info, std::string_view origin) {
  absl::Status ok = check_plugin_info(info, origin);
  if (!ok.ok()) return ok;
  std::shared_ptr<Plugin> plugin(new Plugin());
  plugin->info_ = info;
  return std::shared_ptr<const Plugin>(std::move(plugin));
}

namespace {

// Why dlopen refuses `path`. Boost.DLL reports every refusal as "Bad file
// descriptor" and clears dlerror(), so ask dlopen once more: a library it
// refused (a dependency not found, an undefined symbol under RTLD_NOW) ran
// none of its code, and is refused again for the same reason. A bare file
// name is in the working directory, as Boost.DLL opens it.
std::string dlopen_failure(const std::string& path) {
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  ::dlerror();
  void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle != nullptr) {
    ::dlclose(handle);
    return "dlopen failed once, then opened it (try again)";
  }
  const char* why = ::dlerror();
  return why != nullptr ? why : "dlopen failed without saying why";
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Plugin>> load_plugin(
    const std::string& path, std::string_view expected_sha256) {
  // 1. The hash, before any of the file's code can run.
  absl::StatusOr<std::string> digest = sha256_file(path);
  if (!digest.ok()) {
    return absl::NotFoundError(
        cat("cannot load plugin: ", std::string(digest.status().message())));
  }
  if (!expected_sha256.empty() && lowercase(expected_sha256) != *digest) {
    return absl::PermissionDeniedError(cat(
        "plugin '", path, "' is refused: its sha256 is ", *digest,
        " but the configuration pins ", expected_sha256,
        ". The file changed since it was pinned; if the new file is trusted, "
        "update the pin"));
  }
  if (absl::Status elf = check_shared_object(path); !elf.ok()) return elf;
  // 2. Open it and find the entry point.
  std::shared_ptr<Plugin> plugin(new Plugin());
  plugin->library_ = std::make_unique<Plugin::Library>();
  boost::dll::shared_library& lib = plugin->library_->handle;
  boost::system::error_code error;
  lib.load(boost::dll::fs::path(path),
           boost::dll::load_mode::rtld_local | boost::dll::load_mode::rtld_now,
           error);
  if (error) {
    return absl::InvalidArgumentError(
        cat("cannot load plugin '", path, "': ", dlopen_failure(path)));
  }
  if (!lib.has(FX_PLUGIN_ENTRY_POINT)) {
    return absl::InvalidArgumentError(
        cat("'", path, "' is not an fx plugin: it does not export ",
            FX_PLUGIN_ENTRY_POINT,
            " (define it with FXP_PLUGIN or as extern \"C\" "
            "FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void))"));
  }
  auto& get_info = lib.get<const FxPluginInfo*()>(FX_PLUGIN_ENTRY_POINT);
  // 3. What it declares.
  const FxPluginInfo* info = get_info();
  absl::Status ok = check_plugin_info(info, path);
  if (!ok.ok()) return ok;
  plugin->info_ = info;
  plugin->path_ = path;
  plugin->sha256_ = *std::move(digest);
  return std::shared_ptr<const Plugin>(std::move(plugin));
}

absl::StatusOr<std::vector<std::string>> plugin_files(
    const std::string& directory) {
  namespace fs = boost::filesystem;
  boost::system::error_code error;
  if (!fs::is_directory(directory, error)) {
    return absl::NotFoundError(
        cat("plugin directory '", directory, "' does not exist"));
  }
  std::vector<std::string> files;
  for (fs::directory_iterator it(directory, error), end; !error && it != end;
       it.increment(error)) {
    const fs::path& p = it->path();
    std::string ext = p.extension().string();
    if ((ext == ".so" || ext == ".dylib" || ext == ".dll") &&
        fs::is_regular_file(p, error)) {
      files.push_back(p.string());
    }
  }
  if (error) {
    return absl::InternalError(cat("cannot list plugin directory '", directory,
                                   "': ", std::string(error.message())));
  }
  std::sort(files.begin(), files.end());
  return files;
}

absl::StatusOr<std::vector<std::shared_ptr<const Plugin>>> load_plugin_dir(
    const std::string& directory) {
  absl::StatusOr<std::vector<std::string>> files = plugin_files(directory);
  if (!files.ok()) return files.status();
  std::vector<std::shared_ptr<const Plugin>> plugins;
  for (const std::string& file : *files) {
    absl::StatusOr<std::shared_ptr<const Plugin>> plugin = load_plugin(file);
    if (!plugin.ok()) return plugin.status();
    plugins.push_back(*std::move(plugin));
  }
  return plugins;
}

}  // namespace fx::host
