// hub/curl_api.h — libcurl, loaded on first use (dlopen): a process that never downloads (serve or
// run with a local -m) does not map libcurl and the ~25 libraries it pulls in (3.8 MiB of resident
// pages in a serving process, docs/memory.md).
// Must not know: HTTP semantics (http.cpp).
#pragma once

#include <curl/curl.h>

#include <string>

namespace nt::hub {

// The libcurl functions http.cpp calls, with their own signatures.
struct CurlApi {
  decltype(&curl_global_init) global_init = nullptr;
  decltype(&curl_easy_init) easy_init = nullptr;
  decltype(&curl_easy_setopt) easy_setopt = nullptr;
  decltype(&curl_easy_perform) easy_perform = nullptr;
  decltype(&curl_easy_getinfo) easy_getinfo = nullptr;
  decltype(&curl_easy_strerror) easy_strerror = nullptr;
  decltype(&curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&curl_slist_append) slist_append = nullptr;
  decltype(&curl_slist_free_all) slist_free_all = nullptr;
  decltype(&curl_version) version = nullptr;
};

// The API with curl_global_init done (loaded once per process), or null with *error saying what
// to install when libcurl cannot be loaded.
const CurlApi* curl_api(std::string* error);

}  // namespace nt::hub
