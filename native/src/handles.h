#pragma once
// RAII owners for llama.cpp objects, and the live-handle counters the test suites read to
// prove that nothing native leaked.

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "llama.h"

namespace power {

struct live_counts {
    std::atomic<int> models{0};     // llama_model objects not yet freed
    std::atomic<int> contexts{0};   // llama_context objects not yet freed
    std::atomic<int> jobs{0};       // background jobs whose thread-safe function is not released
    std::atomic<int> projectors{0}; // multimodal projector contexts not yet freed (media.cpp)
};

// process-wide counters, read by the addon's liveHandles()
live_counts & live();

struct model_deleter {
    void operator()(llama_model * m) const;
};
struct context_deleter {
    void operator()(llama_context * c) const;
};
struct sampler_deleter {
    void operator()(llama_sampler * s) const { llama_sampler_free(s); }
};

// a model is shared: the Model object and every session on it hold a reference
using model_ref   = std::shared_ptr<llama_model>;
using context_ptr = std::unique_ptr<llama_context, context_deleter>;
using sampler_ptr = std::unique_ptr<llama_sampler, sampler_deleter>;

// takes ownership of a freshly loaded model (counts it as live)
model_ref adopt_model(llama_model * m);

// What a model's sessions share, built once per model and `key`: the first caller's make() builds
// it (under the registry's lock, so two sessions opened at once build one), later callers get the
// same object. It lives until the model is freed, and goes just before it (model_deleter); a
// null from make() is not kept. It must not hold a model_ref: the model would never be freed.
std::shared_ptr<void> model_attachment(const llama_model * m, const std::string & key, const std::function<std::shared_ptr<void>()> & make);

// takes ownership of a freshly created context (counts it as live)
context_ptr adopt_context(llama_context * c);

// owns a llama_batch from llama_batch_init
class batch_owner {
  public:
    batch_owner(int32_t n_tokens_max, int32_t n_seq_max);
    ~batch_owner();
    batch_owner(const batch_owner &)             = delete;
    batch_owner & operator=(const batch_owner &) = delete;

    llama_batch & get() { return batch_; }
    int32_t capacity() const { return capacity_; }

    // empties the batch, keeping its buffers
    void clear() { batch_.n_tokens = 0; }

    // appends one token on sequence 0
    void add(llama_token token, llama_pos pos, bool want_logits);

  private:
    llama_batch batch_;
    int32_t capacity_;
};

} // namespace power
