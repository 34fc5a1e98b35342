// The greedy loop of the test and bench tools, straight on llama.cpp's C API: the prompt in one
// llama_decode, then one llama_decode per sampled token, no streaming, no checkpoints.
#pragma once

#include <cstdio>
#include <optional>
#include <vector>

#include "llama-cpp.h"

namespace power_tool {

/**
 * Up to `n_predict` greedy tokens after `prompt`, ending before an end-of-generation token.
 * `on_sampled(i)` runs right after the i-th sample, the end-of-generation one included (the
 * bench's clock). Null, after saying so on stderr, when a decode fails.
 */
template <class OnSampled>
std::optional<std::vector<llama_token>> greedy_loop(llama_context * ctx, std::vector<llama_token> & prompt, int n_predict,
                                                    OnSampled on_sampled) {
    const llama_vocab * vocab = llama_model_get_vocab(llama_get_model(ctx));
    llama_sampler_ptr greedy(llama_sampler_init_greedy());
    std::vector<llama_token> out;
    llama_batch batch = llama_batch_get_one(prompt.data(), static_cast<int32_t>(prompt.size()));
    llama_token next  = 0;
    for (int i = 0; i < n_predict; i++) {
        if (llama_decode(ctx, batch) != 0) {
            std::fprintf(stderr, "decode failed\n");
            return std::nullopt;
        }
        next = llama_sampler_sample(greedy.get(), ctx, -1);
        on_sampled(i);
        if (llama_vocab_is_eog(vocab, next)) {
            break;
        }
        out.push_back(next);
        batch = llama_batch_get_one(&next, 1);
    }
    return out;
}

} // namespace power_tool
