#include "sampling.h"

#include <cmath>

namespace power {

std::string validate(const sampling_params & p) {
    if (!std::isfinite(p.temperature) || p.temperature < 0) return "temperature must be >= 0";
    if (p.top_k < 0) return "top-k must be >= 0";
    if (!(p.top_p > 0 && p.top_p <= 1)) return "top-p must be in (0, 1]";
    if (!(p.min_p >= 0 && p.min_p <= 1)) return "min-p must be in [0, 1]";
    if (!std::isfinite(p.repeat_penalty) || p.repeat_penalty <= 0) return "repeat penalty must be > 0";
    if (p.repeat_last_n < 0) return "repeat-last-n must be >= 0";
    if (!std::isfinite(p.presence_penalty) || !std::isfinite(p.frequency_penalty)) {
        return "presence and frequency penalties must be finite";
    }
    return {};
}

sampler_ptr make_sampler(const llama_vocab * vocab, const sampling_params & p) {
    llama_sampler_chain_params cp = llama_sampler_chain_default_params();
    cp.no_perf = true;
    sampler_ptr chain(llama_sampler_chain_init(cp));
    bool penalties = p.repeat_penalty != 1.0f || p.presence_penalty != 0.0f || p.frequency_penalty != 0.0f;
    if (penalties && p.repeat_last_n != 0) {
        llama_sampler_chain_add(chain.get(), llama_sampler_init_penalties(llama_vocab_n_tokens(vocab),
            p.repeat_last_n, p.repeat_penalty, p.frequency_penalty, p.presence_penalty));
    }
    if (p.temperature <= 0.0f) {
        llama_sampler_chain_add(chain.get(), llama_sampler_init_greedy());
        return chain;
    }
    if (p.top_k > 0) llama_sampler_chain_add(chain.get(), llama_sampler_init_top_k(p.top_k));
    if (p.top_p < 1.0f) llama_sampler_chain_add(chain.get(), llama_sampler_init_top_p(p.top_p, 1));
    if (p.min_p > 0.0f) llama_sampler_chain_add(chain.get(), llama_sampler_init_min_p(p.min_p, 1));
    llama_sampler_chain_add(chain.get(), llama_sampler_init_temp(p.temperature));
    llama_sampler_chain_add(chain.get(), llama_sampler_init_dist(p.seed));
    return chain;
}

} // namespace power
