// The scheduler's prompt chunks for a hybrid model whose recurrent layers prefill aligned windows
// of 64 positions in chunked form (set_prefill_alignment, as the engine sets it for qwen35): a
// chunk that is not a request's last ends at a multiple of 64 in its positions, or at a snapshot
// point, whatever decode load shares the steps; no request waits forever for such a cut.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "engine/scheduler.h"
#include "kv/prefix_hash.h"

namespace nt {
namespace {

constexpr int kChunk = 64;
constexpr int kBlock = 16;

std::unique_ptr<KvCacheManager> make_kv() {
  KvLayout l;
  l.n_layer = 1;
  l.n_head_kv = 1;
  l.head_dim = 4;
  l.k_type = l.v_type = DType::F32;
  l.block_size = kBlock;
  l.recurrent_floats = 8;
  auto m = KvCacheManager::create(l, 1 << 14, prefix_chain_seed("align", DType::F32, DType::F32));
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return std::move(m.value());
}

struct Req {
  SchedRequest s;
  int to_generate = 0;
  std::vector<int32_t> chunk_ends;  // start + n of each chunk but the last
};

struct Scenario {
  int budget = 100;
  int max_running = 4;
  int n_decoders = 3;  // short prompts generating many tokens, admitted before the long prompt
  bool align = true;
  int snapshot_every = -1;  // -1: no snapshots
};

// Runs the scenario to the end; the long prompt (301 tokens) is the last request.
std::vector<int32_t> long_prompt_cuts(const Scenario& sc, bool* all_aligned) {
  auto kv = make_kv();
  Scheduler sched(*kv, sc.budget, sc.max_running);
  if (sc.snapshot_every >= 0) sched.set_state_snapshots(sc.snapshot_every, [](int, std::span<const int32_t>) { return 0; });
  if (sc.align) sched.set_prefill_alignment(kChunk);
  std::vector<std::unique_ptr<Req>> reqs;
  for (int i = 0; i <= sc.n_decoders; ++i) {
    auto r = std::make_unique<Req>();
    const bool is_long = i == sc.n_decoders;
    r->s.tokens.assign(size_t(is_long ? 301 : 3 + 7 * i), 1000 * i + 1);
    for (size_t t = 0; t < r->s.tokens.size(); ++t) r->s.tokens[t] += int32_t(t);
    r->to_generate = is_long ? 3 : 200;
    reqs.push_back(std::move(r));
  }
  std::map<SchedRequest*, Req*> of;
  for (auto& r : reqs) {
    of[&r->s] = r.get();
    sched.add(&r->s);
  }
  *all_aligned = true;
  size_t done = 0;
  for (int step = 0; done < reqs.size(); ++step) {
    EXPECT_LT(step, 10000) << "the scheduler stalled";
    if (step >= 10000) break;
    const StepPlan plan = sched.schedule();
    EXPECT_FALSE(plan.chunks.empty()) << "a step with work left planned nothing";
    EXPECT_LE(plan.n_tokens, sc.budget);
    sched.commit(plan);
    for (const ScheduledChunk& c : plan.chunks) {
      Req* r = of[c.req];
      const int32_t end = c.start + c.n;
      if (end < static_cast<int32_t>(r->s.tokens.size())) {
        r->chunk_ends.push_back(end);
        const bool snap = c.snapshot_after;
        if (end % kChunk != 0 && !snap) *all_aligned = false;
        continue;
      }
      if (r->to_generate-- > 0) {
        r->s.tokens.push_back(7);
      } else {
        sched.remove(c.req);
        ++done;
      }
    }
  }
  return reqs.back()->chunk_ends;
}

TEST(PrefillAlignment, PromptChunksEndOnMultiplesOfTheChunkWhateverTheDecodeLoad) {
  for (int budget : {64, 100, 130, 512})
    for (int n_decoders : {0, 1, 3}) {
      Scenario sc;
      sc.budget = budget;
      sc.n_decoders = n_decoders;
      bool aligned = false;
      const std::vector<int32_t> cuts = long_prompt_cuts(sc, &aligned);
      EXPECT_TRUE(aligned) << "budget " << budget << ", " << n_decoders << " decoding";
      for (int32_t e : cuts) EXPECT_EQ(e % kChunk, 0) << "budget " << budget << ", " << n_decoders << " decoding";
      if (budget < 301) EXPECT_FALSE(cuts.empty());
    }
}

TEST(PrefillAlignment, WithoutItTheDecodeLoadMovesTheCuts) {
  // The scenario above is one that needs the alignment: decode tokens push the cuts off 64.
  Scenario sc;
  sc.align = false;
  bool aligned = true;
  const std::vector<int32_t> cuts = long_prompt_cuts(sc, &aligned);
  EXPECT_FALSE(aligned);
  ASSERT_FALSE(cuts.empty());
  EXPECT_NE(cuts[0] % kChunk, 0);
}

TEST(PrefillAlignment, SnapshotPointsAreCutsToo) {
  // Snapshots every 48 tokens (a block multiple off the chunk) and at the prompt's end rounded
  // down to a block (288): chunks end at multiples of 64 or at those points.
  for (int n_decoders : {0, 3}) {
    Scenario sc;
    sc.n_decoders = n_decoders;
    sc.snapshot_every = 48;
    bool aligned = false;
    const std::vector<int32_t> cuts = long_prompt_cuts(sc, &aligned);
    EXPECT_TRUE(aligned) << n_decoders << " decoding";
    for (int32_t e : cuts) EXPECT_TRUE(e % kChunk == 0 || e % 48 == 0 || e == 288) << e;
  }
}

TEST(PrefillAlignment, APromptEndSnapshotNeverCutsAWholeWindowBeforeTheEnd) {
  // 192 tokens: the last block boundary before the final token (176) would cut the whole window
  // 128..191, which a recompute (the generated tokens after it) prefills uncut: 128 instead.
  EXPECT_TRUE(is_snapshot_point(176, 192, kBlock, 0));
  EXPECT_FALSE(is_snapshot_point(176, 192, kBlock, 0, kChunk));
  EXPECT_TRUE(is_snapshot_point(128, 192, kBlock, 0, kChunk));
  // Boundaries in the last, partial window stay: 176 of 190, 192 of 200.
  EXPECT_TRUE(is_snapshot_point(176, 190, kBlock, 0, kChunk));
  EXPECT_TRUE(is_snapshot_point(192, 200, kBlock, 0, kChunk));
  EXPECT_TRUE(is_snapshot_point(48, 64, kBlock, 0));
  EXPECT_FALSE(is_snapshot_point(48, 64, kBlock, 0, kChunk));  // 0: no snapshot for 64 tokens
  // Multiples of `every` are points whatever the alignment.
  EXPECT_TRUE(is_snapshot_point(176, 192, kBlock, 16, kChunk));
}

TEST(PrefillAlignment, APromptEndSnapshotHasOneAtTheWindowBoundaryBelowIt) {
  // 150 tokens: the prompt's end rounded down to a block (144) and the multiple of 64 below (128),
  // which a longer prompt (past 191, filling the window 128..191) resumes from bit for bit.
  EXPECT_TRUE(is_snapshot_point(144, 150, kBlock, 0, kChunk));
  EXPECT_TRUE(is_snapshot_point(128, 150, kBlock, 0, kChunk));
  EXPECT_FALSE(is_snapshot_point(64, 150, kBlock, 0, kChunk));
  EXPECT_FALSE(is_snapshot_point(128, 150, kBlock, 0));  // without the alignment: the end only
  EXPECT_FALSE(is_snapshot_point(0, 50, kBlock, 0, kChunk));  // none below 64
  EXPECT_TRUE(is_snapshot_point(48, 50, kBlock, 0, kChunk));
  // The long prompt (301 tokens) at a whole budget: cut at 256, then at 288 (the end's block).
  Scenario sc;
  sc.budget = 512;
  sc.n_decoders = 0;
  sc.snapshot_every = 0;
  bool aligned = false;
  EXPECT_EQ(long_prompt_cuts(sc, &aligned), (std::vector<int32_t>{256, 288}));
  EXPECT_TRUE(aligned);
}

TEST(PrefillAlignment, ASnapshotResumesOnlyWhereTheWindowsAgree) {
  // Taken at 96 at the end of a 100-token prompt: fine for a prompt ending before 128 (its window
  // 64..127 is not whole, token by token either way), not for a longer one.
  EXPECT_TRUE(is_bit_exact_resume(96, 100, 120, 0, kChunk));
  EXPECT_FALSE(is_bit_exact_resume(96, 100, 200, 0, kChunk));
  EXPECT_TRUE(is_bit_exact_resume(96, 100, 200, 32, kChunk));  // 96 cuts every prompt there too
  EXPECT_TRUE(is_bit_exact_resume(128, 130, 400, 0, kChunk));  // a window boundary
  // Past its prompt's end (70): 100 (the window 64..127 started in the prompt) is fine where that
  // window is not whole; 192 follows the decoded 128..191, which a longer prompt prefills chunked.
  EXPECT_TRUE(is_bit_exact_resume(100, 70, 120, 0, kChunk));
  EXPECT_FALSE(is_bit_exact_resume(192, 70, 400, 64, kChunk));
  EXPECT_FALSE(is_bit_exact_resume(192, 190, 400, 64, kChunk));  // 128..191 was not whole in its prompt
  EXPECT_TRUE(is_bit_exact_resume(192, 192, 400, 0, kChunk));
  EXPECT_TRUE(is_bit_exact_resume(96, 100, 200, 0, 0));  // no alignment: always
}

}  // namespace
}  // namespace nt
