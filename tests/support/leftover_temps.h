// tests/support/leftover_temps.h — the temporary files a writer left in a folder: what commands
// that replace files atomically (core/atomic_file.h) name ".NAME.nexttok-tmp-PID".
#pragma once

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace nt::test {

inline std::vector<std::string> leftover_temps(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.find(".nexttok-tmp-") != std::string::npos) out.push_back(name);
  }
  return out;
}

}  // namespace nt::test
