// server/http_server.h: the request-head syntax check the HTTP library does not make.
#include <gtest/gtest.h>

#include "server/http_server.h"

namespace nt::server {
namespace {

TEST(RequestHead, WellFormedHeadsPass) {
  EXPECT_TRUE(check_request_head("GET /health HTTP/1.1\r\n\r\n"));
  EXPECT_TRUE(check_request_head("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: "
                                 "application/json\r\nContent-Length: 2\r\nX-Odd_Name.1~!: v a l\r\n\r\n"));
  EXPECT_TRUE(check_request_head("GET / HTTP/1.1\r\nEmpty:\r\nX: caf\xc3\xa9\r\n\r\n"));  // obs-text values
}

TEST(RequestHead, WhatTheLibrarySkipsIsRefused) {
  const std::pair<const char*, std::string> bad[] = {
      {"no colon", "GET / HTTP/1.1\r\nHost: x\r\nthis line has no colon\r\n\r\n"},
      {"space in the name", "GET / HTTP/1.1\r\nBad Name: y\r\n\r\n"},
      {"space before the colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n"},
      {"empty name", "GET / HTTP/1.1\r\n: x\r\n\r\n"},
      {"obsolete folding", "GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n"},
      {"bare LF", "GET / HTTP/1.1\r\nX: a\nY: b\r\n\r\n"},
      {"bare CR", "GET / HTTP/1.1\r\nX: a\rY: b\r\n\r\n"},
      {"NUL", std::string("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", 24)},
      {"no blank line", "GET / HTTP/1.1\r\nX: a\r\n"},
      {"request line without CRLF", "GET / HTTP/1.1"},
      {"name with a control byte", "GET / HTTP/1.1\r\nX\x01Y: a\r\n\r\n"},
  };
  for (const auto& [what, head] : bad) {
    const Status st = check_request_head(head);
    EXPECT_FALSE(st) << what;
    if (!st) {
      EXPECT_FALSE(st.error().message.empty()) << what;
    }
  }
  const Status st = check_request_head("GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nno colon\r\n\r\n");
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("header line 3"), std::string::npos) << st.error().message;
}

}  // namespace
}  // namespace nt::server
