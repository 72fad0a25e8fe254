#include "core/files.h"

#include <sys/stat.h>

#include <filesystem>
#include <system_error>

#include "core/strings.h"

namespace nt {

bool same_file(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  struct stat sa {}, sb {};
  const bool a_exists = ::stat(a.c_str(), &sa) == 0, b_exists = ::stat(b.c_str(), &sb) == 0;
  if (a_exists && b_exists) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (a_exists != b_exists) return false;
  std::error_code ea, eb;
  const std::filesystem::path ca = std::filesystem::weakly_canonical(std::filesystem::absolute(a, ea), ea);
  const std::filesystem::path cb = std::filesystem::weakly_canonical(std::filesystem::absolute(b, eb), eb);
  return !ea && !eb && ca == cb;
}

Status check_not_directory(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return make_error("%s: is a directory", path.c_str());
  return {};
}

Status check_output_path(const std::string& out, const std::vector<std::string>& inputs) {
  NT_TRY(check_not_directory(out));
  for (const std::string& in : inputs)
    if (same_file(out, in))
      return make_error("%s is the same file as the input %s; writing it would destroy the input, so choose "
                        "another output path",
                        out.c_str(), in.c_str());
  return {};
}

}  // namespace nt
