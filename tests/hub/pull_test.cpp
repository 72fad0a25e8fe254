// hub::pull against the fake Hub: HF cache layout, quant selection, resume, checksum, offline,
// gated repos, multi-part sets, reuse of a cache filled by other tools. No test touches the internet.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "gguf/gguf.h"
#include "hub/fake_hub.h"
#include "hub/hub.h"
#include "hub/repo_spec.h"
#include "support/test_support.h"

namespace nt::hub {
namespace {

using nt::test::FakeFile;
using nt::test::FakeHub;
using nt::test::FakeRepo;
using nt::test::make_tiny_gguf;
using nt::test::read_text;
using nt::test::sha256_oracle;

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";
const std::string kCommit2 = "89abcdef0123456789abcdef0123456789abcdef";

std::string link_target(const std::string& p) {
  char buf[4096];
  ssize_t n = ::readlink(p.c_str(), buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}
bool exists(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0;
}

class PullTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "HF_TOKEN_PATH", "HF_ENDPOINT",
                          "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "http_proxy", "https_proxy", "HTTP_PROXY",
                          "HTTPS_PROXY", "ALL_PROXY", "all_proxy"})
      ::unsetenv(v);
    home_ = nt::test::temp_dir();
    ::setenv("HF_HOME", home_.c_str(), 1);  // no token file from the real home
    cache_ = home_ + "/hub";
    q8_ = make_tiny_gguf("tiny-q8", 64 * 1024);  // 256 KiB: room to cut a transfer
    q4_ = make_tiny_gguf("tiny-q4", 4096);
    hub_.add_repo({"org/model-GGUF", kCommit,
                   {{"README.md", "# tiny\n", false}, {"model-Q4_K_M.gguf", q4_}, {"model-Q8_0.gguf", q8_},
                    {"model-Q4_K_S.gguf", make_tiny_gguf("tiny-q4s")}}});
    hub_.add_repo({"org/split-GGUF", kCommit2,
                   {{"m-Q8_0-00001-of-00003.gguf", make_tiny_gguf("p1")},
                    {"m-Q8_0-00002-of-00003.gguf", make_tiny_gguf("p2")},
                    {"m-Q8_0-00003-of-00003.gguf", make_tiny_gguf("p3")}}});
    hub_.add_repo({"org/gated-GGUF", kCommit, {{"g-Q8_0.gguf", make_tiny_gguf("gated")}}, true});
    hub_.add_repo({"org/junk-GGUF", kCommit, {{"junk-Q8_0.gguf", std::string(5000, 'x')}}});
    hub_.add_repo({"org/plain-GGUF", kCommit, {{"plain-Q8_0.gguf", make_tiny_gguf("plain"), false}}});
  }

  PullOptions opts(const std::string& spec) {
    PullOptions o;
    o.spec = spec;
    o.endpoint = hub_.endpoint();
    o.cache_dir = cache_;
    o.progress = false;
    o.max_retries = 0;
    return o;
  }
  std::string repo_dir(const std::string& repo) { return cache_ + "/" + repo_folder_name(repo); }

  FakeHub hub_;
  std::string home_, cache_, q8_, q4_;
};

TEST_F(PullTest, QuantPullLandsInHuggingFaceLayout) {
  auto r = pull(opts("org/model-GGUF:q8_0"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::string sha = sha256_oracle(q8_);
  const std::string dir = repo_dir("org/model-GGUF");
  EXPECT_EQ(r->commit, kCommit);
  EXPECT_EQ(r->revision, "main");
  ASSERT_EQ(r->files.size(), 1u);
  EXPECT_EQ(r->files[0].file, "model-Q8_0.gguf");
  EXPECT_EQ(r->path(), dir + "/snapshots/" + kCommit + "/model-Q8_0.gguf");
  EXPECT_EQ(link_target(r->path()), "../../blobs/" + sha);  // relative symlink, as huggingface_hub makes
  EXPECT_EQ(read_text(dir + "/blobs/" + sha), q8_);
  EXPECT_EQ(read_text(dir + "/refs/main"), kCommit);
  EXPECT_FALSE(exists(dir + "/blobs/" + sha + ".incomplete"));
  EXPECT_EQ(r->files[0].sha256, sha);
  EXPECT_EQ(r->bytes(), q8_.size());
  EXPECT_FALSE(r->cached());
  EXPECT_EQ(hub_.blob_gets, 1);
  auto g = GgufFile::open(r->path());
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->get_str("general.name").value(), "tiny-q8");
}

TEST_F(PullTest, SecondPullIsServedFromTheCache) {
  ASSERT_TRUE(pull(opts("org/model-GGUF:Q8_0")).ok());
  auto again = pull(opts("org/model-GGUF:Q8_0"));
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(again->cached());
  EXPECT_EQ(hub_.blob_gets, 1);
  EXPECT_EQ(again->files[0].sha256, sha256_oracle(q8_));
}

TEST_F(PullTest, ExplicitFileAndDefaultQuant) {
  auto f = pull(opts("org/model-GGUF/model-Q4_K_S.gguf"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->files[0].file, "model-Q4_K_S.gguf");
  auto d = pull(opts("org/model-GGUF"));  // several GGUFs: Q4_K_M is the default
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->files[0].file, "model-Q4_K_M.gguf");
}

TEST_F(PullTest, QuantSelectionErrorsListTheFiles) {
  auto none = pull(opts("org/model-GGUF:Q5_K_M"));
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("Q5_K_M"), std::string::npos);
  EXPECT_NE(none.error().message.find("model-Q8_0.gguf"), std::string::npos) << none.error().message;
  auto several = pull(opts("org/model-GGUF:Q4_K"));  // no file carries exactly Q4_K
  ASSERT_FALSE(several.ok());
  auto many = pull(opts("org/model-GGUF:gguf"));     // ".gguf" is in every name: several match
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.error().message.find("several"), std::string::npos) << many.error().message;
  EXPECT_NE(many.error().message.find("model-Q4_K_S.gguf"), std::string::npos);
  EXPECT_EQ(hub_.blob_gets, 0);
}

TEST_F(PullTest, CutDownloadResumesWithRange) {
  hub_.cut_downloads = 1;
  hub_.cut_at = 100000;
  auto first = pull(opts("org/model-GGUF:Q8_0"));
  ASSERT_FALSE(first.ok());
  EXPECT_NE(first.error().message.find("resume"), std::string::npos) << first.error().message;
  const std::string sha = sha256_oracle(q8_);
  const std::string part = repo_dir("org/model-GGUF") + "/blobs/" + sha + ".incomplete";
  std::string partial = read_text(part);
  EXPECT_EQ(partial.size(), 100000u);
  EXPECT_EQ(partial, q8_.substr(0, 100000));
  EXPECT_FALSE(exists(repo_dir("org/model-GGUF") + "/blobs/" + sha));

  auto second = pull(opts("org/model-GGUF:Q8_0"));
  ASSERT_TRUE(second.ok()) << second.error().message;
  auto ranges = hub_.ranges();
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0], "");
  EXPECT_EQ(ranges[1], "bytes=100000-");
  EXPECT_EQ(read_text(second->path()), q8_);
  EXPECT_FALSE(exists(part));
}

TEST_F(PullTest, RetriesResumeWithinOnePull) {
  hub_.cut_downloads = 2;
  hub_.cut_at = 70000;  // the 2nd attempt starts at 70000 and is cut at once (offset >= cut_at)
  auto o = opts("org/model-GGUF:Q8_0");
  o.max_retries = 3;
  auto r = pull(o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(read_text(r->path()), q8_);
  auto ranges = hub_.ranges();
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ(ranges[2], "bytes=70000-");
}

TEST_F(PullTest, CorruptedTransferIsCaughtByChecksumAndDeleted) {
  hub_.corrupt_downloads = 1;
  auto bad = pull(opts("org/model-GGUF:Q8_0"));
  ASSERT_FALSE(bad.ok());
  const std::string& msg = bad.error().message;
  EXPECT_NE(msg.find("checksum mismatch"), std::string::npos) << msg;
  EXPECT_NE(msg.find("deleted"), std::string::npos) << msg;
  const std::string sha = sha256_oracle(q8_);
  const std::string dir = repo_dir("org/model-GGUF");
  EXPECT_FALSE(exists(dir + "/blobs/" + sha + ".incomplete"));
  EXPECT_FALSE(exists(dir + "/blobs/" + sha));
  EXPECT_FALSE(exists(dir + "/snapshots/" + kCommit + "/model-Q8_0.gguf"));
  auto good = pull(opts("org/model-GGUF:Q8_0"));  // a clean retry succeeds
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_EQ(read_text(good->path()), q8_);
}

TEST_F(PullTest, OfflineUsesTheCacheOnly) {
  auto miss = [&] { auto o = opts("org/model-GGUF:Q8_0"); o.offline = true; return pull(o); }();
  ASSERT_FALSE(miss.ok());
  EXPECT_NE(miss.error().message.find("offline"), std::string::npos) << miss.error().message;
  EXPECT_EQ(hub_.api_calls, 0);

  auto online = pull(opts("org/model-GGUF:Q8_0"));
  ASSERT_TRUE(online.ok()) << online.error().message;
  int calls = hub_.api_calls + hub_.head_calls + hub_.blob_gets;
  hub_.down = true;
  auto o = opts("org/model-GGUF:Q8_0");
  o.offline = true;
  auto off = pull(o);
  ASSERT_TRUE(off.ok()) << off.error().message;
  EXPECT_TRUE(off->offline);
  EXPECT_EQ(off->path(), online->path());
  EXPECT_EQ(off->files[0].sha256, sha256_oracle(q8_));
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  auto env_off = pull(opts("org/model-GGUF:q8_0"));
  ::unsetenv("HF_HUB_OFFLINE");
  ASSERT_TRUE(env_off.ok()) << env_off.error().message;
  EXPECT_EQ(hub_.api_calls + hub_.head_calls + hub_.blob_gets, calls);  // nothing asked
  auto other = [&] { auto p = opts("org/model-GGUF:Q4_K_M"); p.offline = true; return pull(p); }();
  ASSERT_FALSE(other.ok());  // that quant was never fetched
  EXPECT_NE(other.error().message.find("model-Q8_0.gguf"), std::string::npos) << other.error().message;
}

TEST_F(PullTest, UnreachableHubFallsBackToCacheOrSaysSo) {
  auto o = opts("org/model-GGUF:Q8_0");
  o.endpoint = "http://127.0.0.1:1";  // nothing listens there
  auto fail = pull(o);
  ASSERT_FALSE(fail.ok());
  EXPECT_NE(fail.error().message.find("HF_HUB_OFFLINE"), std::string::npos) << fail.error().message;
  ASSERT_TRUE(pull(opts("org/model-GGUF:Q8_0")).ok());
  auto cached = pull(o);
  ASSERT_TRUE(cached.ok()) << cached.error().message;
  EXPECT_TRUE(cached->offline);
}

TEST_F(PullTest, ReusesACacheFilledByOtherTools) {
  // Lay the files out as huggingface_hub does, by hand.
  const std::string dir = repo_dir("org/model-GGUF");
  const std::string sha = sha256_oracle(q8_);
  ASSERT_EQ(::system(("mkdir -p '" + dir + "/blobs' '" + dir + "/refs' '" + dir + "/snapshots/" + kCommit + "'").c_str()), 0);
  nt::test::write_text(dir + "/blobs/" + sha, q8_);
  nt::test::write_text(dir + "/refs/main", kCommit);
  ASSERT_EQ(::symlink(("../../blobs/" + sha).c_str(), (dir + "/snapshots/" + kCommit + "/model-Q8_0.gguf").c_str()), 0);

  auto o = opts("org/model-GGUF:Q8_0");
  o.offline = true;
  auto off = pull(o);
  ASSERT_TRUE(off.ok()) << off.error().message;
  EXPECT_EQ(off->files[0].sha256, sha);
  auto on = pull(opts("org/model-GGUF:Q8_0"));
  ASSERT_TRUE(on.ok()) << on.error().message;
  EXPECT_TRUE(on->cached());
  EXPECT_EQ(hub_.blob_gets, 0);

  // A blob present under another commit's snapshot is linked, not downloaded again.
  const std::string sha4 = sha256_oracle(q4_);
  nt::test::write_text(dir + "/blobs/" + sha4, q4_);
  auto q4 = pull(opts("org/model-GGUF:Q4_K_M"));
  ASSERT_TRUE(q4.ok()) << q4.error().message;
  EXPECT_TRUE(q4->cached());
  EXPECT_EQ(hub_.blob_gets, 0);
  EXPECT_EQ(link_target(q4->path()), "../../blobs/" + sha4);
}

TEST_F(PullTest, GatedRepoNeedsAToken) {
  auto no = pull(opts("org/gated-GGUF:Q8_0"));
  ASSERT_FALSE(no.ok());
  const std::string& msg = no.error().message;
  EXPECT_NE(msg.find("401"), std::string::npos) << msg;
  EXPECT_NE(msg.find("gated"), std::string::npos) << msg;
  EXPECT_NE(msg.find("HF_TOKEN"), std::string::npos) << msg;
  auto wrong = [&] { auto o = opts("org/gated-GGUF:Q8_0"); o.token = "nope"; return pull(o); }();
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message.find("token"), std::string::npos) << wrong.error().message;
  ::setenv("HF_TOKEN", FakeHub::kToken, 1);
  auto env = pull(opts("org/gated-GGUF:Q8_0"));
  ::unsetenv("HF_TOKEN");
  ASSERT_TRUE(env.ok()) << env.error().message;
}

TEST_F(PullTest, TokenFileFromHfHomeIsUsed) {
  nt::test::write_text(home_ + "/token", std::string(FakeHub::kToken) + "\n");
  auto r = pull(opts("org/gated-GGUF:Q8_0"));
  ASSERT_TRUE(r.ok()) << r.error().message;
}

TEST_F(PullTest, UnknownRepoAndRevision) {
  auto repo = pull(opts("org/missing-GGUF:Q8_0"));
  ASSERT_FALSE(repo.ok());
  EXPECT_NE(repo.error().message.find("org/missing-GGUF"), std::string::npos) << repo.error().message;
  EXPECT_NE(repo.error().message.find("check the repo name"), std::string::npos) << repo.error().message;
  auto o = opts("org/model-GGUF:Q8_0");
  o.revision = "v9";
  auto rev = pull(o);
  ASSERT_FALSE(rev.ok());
  EXPECT_NE(rev.error().message.find("--revision"), std::string::npos) << rev.error().message;
}

TEST_F(PullTest, RevisionPinnedToACommit) {
  auto o = opts("org/model-GGUF:Q8_0");
  o.revision = kCommit;
  auto r = pull(o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->commit, kCommit);
  EXPECT_FALSE(exists(repo_dir("org/model-GGUF") + "/refs/" + kCommit));  // a commit needs no ref
  hub_.down = true;
  auto again = pull(o);  // a cached commit needs no network
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(again->cached());
}

TEST_F(PullTest, MultiPartSetIsFetchedWhole) {
  auto r = pull(opts("org/split-GGUF:Q8_0"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->files.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    std::string name = "m-Q8_0-0000" + std::to_string(i + 1) + "-of-00003.gguf";
    EXPECT_EQ(r->files[static_cast<size_t>(i)].file, name);
    EXPECT_EQ(read_text(r->files[static_cast<size_t>(i)].path), make_tiny_gguf("p" + std::to_string(i + 1)));
  }
  EXPECT_EQ(r->path(), repo_dir("org/split-GGUF") + "/snapshots/" + kCommit2 + "/m-Q8_0-00001-of-00003.gguf");
  EXPECT_EQ(hub_.blob_gets, 3);
  auto o = opts("org/split-GGUF/m-Q8_0-00003-of-00003.gguf");  // any part names the set
  o.offline = true;
  auto off = pull(o);
  ASSERT_TRUE(off.ok()) << off.error().message;
  EXPECT_EQ(off->files.size(), 3u);
}

TEST_F(PullTest, NonLfsFileIsStoredUnderItsEtag) {
  // Small files kept in git (not LFS) are answered directly, with a git ETag and no X-Linked-*.
  auto r = pull(opts("org/plain-GGUF:Q8_0"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::string data = make_tiny_gguf("plain");
  EXPECT_EQ(read_text(r->path()), data);
  std::string target = link_target(r->path());
  ASSERT_EQ(target.size(), std::string("../../blobs/").size() + 40) << target;  // a 40-hex git ETag
  EXPECT_EQ(r->files[0].sha256, sha256_oracle(data));  // computed while downloading
  EXPECT_EQ(r->bytes(), data.size());
}

TEST_F(PullTest, ConcurrentPullsDownloadOnce) {
  // The blob lock (.locks/models--org--repo/<sha>.lock) makes the second puller wait and reuse.
  Result<PullResult> a = Error{"not run"}, b = Error{"not run"};
  std::thread ta([&] { a = pull(opts("org/model-GGUF:Q8_0")); });
  std::thread tb([&] { b = pull(opts("org/model-GGUF:Q8_0")); });
  ta.join();
  tb.join();
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(a->path(), b->path());
  EXPECT_EQ(read_text(a->path()), q8_);
  EXPECT_EQ(hub_.blob_gets, 1);
  EXPECT_TRUE(exists(cache_ + "/.locks/models--org--model-GGUF/" + sha256_oracle(q8_) + ".lock"));
}

TEST_F(PullTest, ResultMustBeAGguf) {
  auto r = pull(opts("org/junk-GGUF:Q8_0"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not a usable GGUF"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace nt::hub
