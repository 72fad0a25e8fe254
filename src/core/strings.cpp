#include "core/strings.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace nt {

static std::string vformat(const char* fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = std::vsnprintf(nullptr, 0, fmt, ap2);
  va_end(ap2);
  if (n <= 0) return {};
  std::string out(static_cast<size_t>(n), '\0');
  std::vsnprintf(out.data(), out.size() + 1, fmt, ap);
  return out;
}

std::string str_printf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string s = vformat(fmt, ap);
  va_end(ap);
  return s;
}

Error make_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string s = vformat(fmt, ap);
  va_end(ap);
  return Error{std::move(s)};
}

Error make_error(ErrorKind kind, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string s = vformat(fmt, ap);
  va_end(ap);
  return Error{std::move(s), kind};
}

const char* error_kind_name(ErrorKind k) {
  switch (k) {
    case ErrorKind::InvalidArgument: return "invalid_argument";
    case ErrorKind::PromptTooLong: return "prompt_too_long";
    case ErrorKind::Capacity: return "capacity";
    case ErrorKind::Cancelled: return "cancelled";
    case ErrorKind::Internal: return "internal";
  }
  return "internal";
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

std::string format_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  if (u == 0) return str_printf("%llu B", static_cast<unsigned long long>(bytes));
  return str_printf("%.2f %s", v, units[u]);
}

std::string format_thousands(uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

std::string visible_piece(std::string_view p) {
  std::string out;
  for (size_t i = 0; i < p.size();) {
    const unsigned char c = static_cast<unsigned char>(p[i]);
    // Bytes in a sequence: 1 for ASCII, 2-4 by the lead byte's pattern, 0 for a byte that cannot lead.
    const size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    bool valid = len > 0 && i + len <= p.size();
    for (size_t k = 1; valid && k < len; ++k) valid = (static_cast<unsigned char>(p[i + k]) & 0xC0) == 0x80;
    if (!valid) {
      out += str_printf("\\x%02X", c);
      ++i;
      continue;
    }
    if (len > 1) out.append(p.substr(i, len));
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c == '\'') out += "\\'";
    else if (c == '\\') out += "\\\\";
    else if (c < 0x20 || c == 0x7F) out += str_printf("\\x%02X", c);
    else out += static_cast<char>(c);
    i += len;
  }
  return out;
}

Result<std::string> read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error("%s: cannot open: %s", path.c_str(), std::strerror(errno));
  // a directory opens fine and reads as empty (or EISDIR): say what it is instead
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return make_error("%s: is a directory", path.c_str());
  }
  std::string out;
  if (S_ISREG(st.st_mode) && st.st_size > 0) out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      return make_error("%s: read error: %s", path.c_str(), std::strerror(e));
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace nt
