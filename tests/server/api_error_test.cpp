// Tests for to_api_error and error_body (server/api_request.h): the status, type, param and code
// every engine or parser error becomes.
#include <gtest/gtest.h>

#include "server/api_request.h"

namespace nt::server {
namespace {

TEST(ApiError, StatusTypeParamAndCode) {
  ApiError e = to_api_error(Error{"temperature must be a finite number", ErrorKind::InvalidArgument});
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.type, "invalid_request_error");
  EXPECT_EQ(e.param, "temperature");
  e = to_api_error(Error{"messages[2].content: required", ErrorKind::InvalidArgument});
  EXPECT_EQ(e.param, "messages[2].content");
  e = to_api_error(Error{"model file missing", ErrorKind::InvalidArgument});
  EXPECT_EQ(e.param, "model");
  e = to_api_error(Error{"bogus: thing", ErrorKind::InvalidArgument});
  EXPECT_EQ(e.param, "");
  e = to_api_error(Error{"temperature", ErrorKind::InvalidArgument});  // no ':' or ' ' after it
  EXPECT_EQ(e.param, "");
  e = to_api_error(Error{"the prompt is 900 tokens; the context holds 512", ErrorKind::PromptTooLong});
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.code, "context_length_exceeded");
  EXPECT_EQ(e.param, "");
  e = to_api_error(Error{"prompt: too long", ErrorKind::PromptTooLong});
  EXPECT_EQ(e.param, "prompt");
  e = to_api_error(Error{"queue full", ErrorKind::Capacity});
  EXPECT_EQ(e.status, 429);
  e = to_api_error(Error{"cancelled", ErrorKind::Cancelled});
  EXPECT_EQ(e.status, 499);
  e = to_api_error(Error{"temperature: boom", ErrorKind::Internal});
  EXPECT_EQ(e.status, 500);
  EXPECT_EQ(e.type, "server_error");
  EXPECT_EQ(e.param, "");
}

TEST(ApiError, Body) {
  ApiError e;
  e.message = "n: only 1";
  e.param = "n";
  nlohmann::json b = error_body(e);
  EXPECT_EQ(b["error"]["message"], "n: only 1");
  EXPECT_EQ(b["error"]["type"], "invalid_request_error");
  EXPECT_EQ(b["error"]["param"], "n");
  EXPECT_TRUE(b["error"]["code"].is_null());
  e.param.clear();
  e.code = "context_length_exceeded";
  b = error_body(e);
  EXPECT_TRUE(b["error"]["param"].is_null());
  EXPECT_EQ(b["error"]["code"], "context_length_exceeded");
  EXPECT_EQ(b.size(), 1u);
  EXPECT_EQ(b["error"].size(), 4u);
}

TEST(ApiError, SamplerValidationKeepsItsMessage) {
  // validate() runs after the fields are read: its message goes out as-is, param from its start.
  // (Every range it checks is also checked while reading; a NaN bias cannot come from JSON.)
  SamplerParams p;
  p.top_p = 2;
  Status s = validate(p);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(to_api_error(s.error()).param, "top_p");
}

}  // namespace
}  // namespace nt::server
