#pragma once
// Round records on their way to JS, coalesced. Waking JS costs a core (two processes handle each
// event: the engine host and its caller), and on a machine with few cores that core is one
// ggml's threads are waiting for. So the generation thread hands rounds over in batches: the
// reply's first token at once, later rounds when the last hand-over is flush_interval_us old or
// max_pending rounds piled up, the rest when the request ends. Nothing is dropped or reordered:
// every round record reaches JS, in order. Buffers are recycled, so a round allocates nothing.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "generate.h"

namespace power {

// spare batches: taken by the generation thread, given back by the JS thread once delivered
class round_batch_pool {
  public:
    std::shared_ptr<round_batch> take();
    void give(std::shared_ptr<round_batch> batch);

  private:
    std::mutex mutex_;
    std::vector<std::shared_ptr<round_batch>> spare_;
};

class round_stream : public round_sink {
  public:
    // One display frame: the renderer applies batches once per animation frame, so handing over
    // more often shows nothing sooner and costs both processes a wake-up each time. With a frame's
    // interval the round cap is what closes a batch down to ~1,000 rounds/s, so a long reply's
    // batches stay max_pending rounds as its decode slows, and the fixed cost of each (the IPC
    // message, its check, the SSE write) per round stays flat (bench/serve-stream.ts).
    static constexpr int64_t flush_interval_us = 16000;
    static constexpr size_t max_pending        = 16;

    // `deliver` takes a batch to JS (called on the generation thread, in order)
    using deliver_fn = std::function<void(std::shared_ptr<round_batch>)>;
    round_stream(std::shared_ptr<round_batch_pool> pool, deliver_fn deliver);

    round_batch & open() override;
    void close(bool first) override;

    // hands over whatever is pending (the end of a request, or its failure)
    void flush() override;

  private:
    std::shared_ptr<round_batch_pool> pool_;
    deliver_fn deliver_;
    std::shared_ptr<round_batch> pending_;
    int64_t last_flush_us_ = 0;
};

} // namespace power
