// --api-key beyond HttpAuth.EveryRouteButHealthNeedsTheKey (issue 27, security): keys that almost
// match (a prefix, one character more, another scheme, the key without "Bearer ") are refused on
// every protected route of the server's own table, and so is every other method on those paths;
// a refusal never echoes the key it was sent.
#include <gtest/gtest.h>

#include "server_harness.h"

namespace nt::test {
namespace {

TEST(HttpAuth, NearMissKeysAndOtherMethodsAreRefused) {
  NT_REQUIRE_SHARED();
  const std::string key = "sekrit-key-27";
  server::ServerOptions o;
  o.api_key = key;
  ModelSpec spec;
  spec.engine.n_ctx = 512;
  TestServer srv(o, spec);
  ASSERT_TRUE(srv.ok());
  auto cli = srv.client();
  const std::vector<std::string> near = {
      "Bearer " + key.substr(0, key.size() - 1),  // a prefix
      "Bearer " + key + "x",                      // one character more
      "Bearer " + key.substr(1),                  // a suffix
      "Bearer ",                                  // empty
      "Bearer",                                   // no key at all
      key,                                        // no scheme
      "Basic " + key,                             // another scheme
      "Bearer " + key + key,                      // twice
      std::string("Bearer ") + char(key[0] ^ 0x20) + key.substr(1),  // case of one letter
  };
  int checked = 0;
  for (const server::RouteInfo& r : server::Server::routes()) {
    if (!r.needs_key) continue;
    for (const std::string& v : near) {
      const httplib::Headers h = {{"Authorization", v}};
      const HttpAnswer a = r.method == "GET" ? get(*cli, r.path, h) : post_json(*cli, r.path, "{}", h);
      EXPECT_EQ(a.status, 401) << r.method << " " << r.path << " with '" << v << "': " << a.raw;
      EXPECT_EQ(a.raw.find(key.substr(2)), std::string::npos) << "the answer echoes the key: " << a.raw;
      ++checked;
    }
    // The other methods on a protected path are no way around the key either.
    for (const char* m : {"PUT", "PATCH", "DELETE", r.method == "GET" ? "POST" : "GET"}) {
      httplib::Request req;
      req.method = m;
      req.path = r.path;
      if (std::string(m) != "GET" && std::string(m) != "DELETE") {
        req.body = "{}";
        req.set_header("Content-Type", "application/json");
      }
      httplib::Response res;
      httplib::Error err;
      ASSERT_TRUE(cli->send(req, res, err)) << m << " " << r.path;
      EXPECT_EQ(res.status, 401) << m << " " << r.path << ": " << res.body;
    }
  }
  EXPECT_GE(checked, 8 * int(near.size()));
  // The real key still works (the refusals above are not a broken server).
  EXPECT_EQ(get(*cli, "/v1/models", {{"Authorization", "Bearer " + key}}).status, 200);
}

}  // namespace
}  // namespace nt::test
