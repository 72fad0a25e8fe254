// server/request_channel.h — hands one request's TokenEvents from the engine thread (the sink
// pushes) to the HTTP thread that answers it (which waits in short slices, so it can also watch
// its connection).
#pragma once
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <vector>
#include "engine/request.h"

namespace nt::server {

class RequestChannel {
 public:
  void push(const TokenEvent& ev) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      events_.push_back(ev);
    }
    cv_.notify_one();
  }
  // Moves every queued event into `out` (cleared first), waiting up to `wait` for the first.
  void pop_all(std::vector<TokenEvent>& out, std::chrono::milliseconds wait) {
    out.clear();
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait_for(lk, wait, [&] { return !events_.empty(); });
    while (!events_.empty()) {
      out.push_back(std::move(events_.front()));
      events_.pop_front();
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<TokenEvent> events_;
};

}  // namespace nt::server
