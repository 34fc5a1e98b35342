#include "round_stream.h"

#include "llama.h"

namespace power {

std::shared_ptr<round_batch> round_batch_pool::take() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (spare_.empty()) {
        return std::make_shared<round_batch>();
    }
    std::shared_ptr<round_batch> batch = std::move(spare_.back());
    spare_.pop_back();
    return batch;
}

void round_batch_pool::give(std::shared_ptr<round_batch> batch) {
    batch->clear();
    std::lock_guard<std::mutex> lock(mutex_);
    spare_.push_back(std::move(batch));
}

round_stream::round_stream(std::shared_ptr<round_batch_pool> pool, deliver_fn deliver) :
    pool_(std::move(pool)), deliver_(std::move(deliver)) {}

round_batch & round_stream::open() {
    if (!pending_) {
        pending_ = pool_->take();
    }
    return *pending_;
}

void round_stream::close(bool first) {
    const int64_t now = llama_time_us();
    if (first || pending_->rounds() >= max_pending || now - last_flush_us_ >= flush_interval_us) {
        flush();
        last_flush_us_ = now;
    }
}

void round_stream::flush() {
    if (pending_) {
        pending_->drop_partial_round();
    }
    if (pending_ && pending_->rounds() > 0) {
        deliver_(std::move(pending_));
    }
    pending_.reset();
}

} // namespace power
