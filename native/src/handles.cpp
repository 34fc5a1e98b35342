#include "handles.h"

namespace power {

live_counts & live() {
    static live_counts counts;
    return counts;
}

void model_deleter::operator()(llama_model * m) const {
    if (m) {
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
