#include "hub/curl_api.h"

#include <dlfcn.h>

#include <mutex>
#include <type_traits>

namespace nt::hub {

const CurlApi* curl_api(std::string* error) {
  static CurlApi api;
  static std::string load_error;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* why = dlerror();
      load_error = std::string("cannot load libcurl.so.4 (") + (why ? why : "not found") +
                   "): downloads need libcurl 4 (Debian: apt install libcurl4)";
      return;
    }
    CurlApi a;
    bool ok = true;
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (!fn && ok) {
        ok = false;
        load_error = std::string("libcurl.so.4 has no ") + name + ": downloads need libcurl 4";
      }
    };
    sym(a.global_init, "curl_global_init");
    sym(a.easy_init, "curl_easy_init");
    sym(a.easy_setopt, "curl_easy_setopt");
    sym(a.easy_perform, "curl_easy_perform");
    sym(a.easy_getinfo, "curl_easy_getinfo");
    sym(a.easy_strerror, "curl_easy_strerror");
    sym(a.easy_cleanup, "curl_easy_cleanup");
    sym(a.slist_append, "curl_slist_append");
    sym(a.slist_free_all, "curl_slist_free_all");
    sym(a.version, "curl_version");
    if (!ok) return;  // the handle stays open: unloading a half-used library buys nothing
    if (a.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      load_error = "libcurl could not initialise (curl_global_init failed)";
      return;
    }
    api = a;
  });
  if (!api.easy_init) {
    if (error) *error = load_error;
    return nullptr;
  }
  return &api;
}

}  // namespace nt::hub
