#include "handles.h"

#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace power {
namespace {

struct attachments {
    std::mutex lock;
    std::map<std::pair<const llama_model *, std::string>, std::shared_ptr<void>> held;
};

attachments & model_attachments() {
    static attachments a;
    return a;
}

// the attachments of `m`, out of the registry: the caller frees them (outside its lock)
std::vector<std::shared_ptr<void>> detach_all(const llama_model * m) {
    attachments & a = model_attachments();
    std::vector<std::shared_ptr<void>> out;
    std::lock_guard<std::mutex> hold(a.lock);
    for (auto it = a.held.lower_bound({m, std::string()}); it != a.held.end() && it->first.first == m;) {
        out.push_back(std::move(it->second));
        it = a.held.erase(it);
    }
    return out;
}

} // namespace

live_counts & live() {
    static live_counts counts;
    return counts;
}

void model_deleter::operator()(llama_model * m) const {
    if (m) {
        detach_all(m).clear(); // what the model's sessions shared goes first: it may read the model
        llama_model_free(m);
        live().models--;
    }
}

void context_deleter::operator()(llama_context * c) const {
    if (c) {
        llama_free(c);
        live().contexts--;
    }
}

model_ref adopt_model(llama_model * m) {
    live().models++;
    return model_ref(m, model_deleter{});
}

std::shared_ptr<void> model_attachment(const llama_model * m, const std::string & key,
                                       const std::function<std::shared_ptr<void>()> & make) {
    attachments & a = model_attachments();
    std::lock_guard<std::mutex> hold(a.lock);
    std::shared_ptr<void> & slot = a.held[{m, key}];
    if (!slot) {
        slot = make();
    }
    std::shared_ptr<void> out = slot;
    if (!out) {
        a.held.erase({m, key});
    }
    return out;
}

context_ptr adopt_context(llama_context * c) {
    live().contexts++;
    return context_ptr(c);
}

batch_owner::batch_owner(int32_t n_tokens_max, int32_t n_seq_max) :
    batch_(llama_batch_init(n_tokens_max, 0, n_seq_max)), capacity_(n_tokens_max) {}

batch_owner::~batch_owner() {
    llama_batch_free(batch_);
}

void batch_owner::add(llama_token token, llama_pos pos, bool want_logits) {
    const int32_t i     = batch_.n_tokens;
    batch_.token[i]     = token;
    batch_.pos[i]       = pos;
    batch_.n_seq_id[i]  = 1;
    batch_.seq_id[i][0] = 0;
    batch_.logits[i]    = want_logits;
    batch_.n_tokens++;
}

} // namespace power
