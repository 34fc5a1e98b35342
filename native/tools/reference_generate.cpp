// Reference greedy loop written straight against llama.cpp's C API, for the test suite: the
// addon's autoregressive path must emit exactly these token ids.
//
//   power-reference <model.gguf> <n_predict> <n_ctx> <token,token,...>
// prints the generated token ids, comma-separated, on one line.

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tool_setup.h"

int main(int argc, char ** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s model.gguf n_predict n_ctx tok,tok,...\n", argv[0]);
        return 2;
    }
    const int n_predict             = std::atoi(argv[2]);
    const int n_ctx                 = std::atoi(argv[3]);
    std::vector<llama_token> prompt = power_tool::parse_tokens(argv[4]);

    llama_model_ptr model = power_tool::load_cpu_model(argv[0], argv[1]);
    if (!model) {
        return 1;
    }
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx                = n_ctx;
    cp.n_batch              = n_ctx;
    cp.n_threads            = 1; // tiny test models: more threads only add spin-waiting
    cp.n_threads_batch      = 1;
    llama_context_ptr ctx(llama_init_from_model(model.get(), cp));
    if (!ctx) {
        std::fprintf(stderr, "context failed\n");
        return 1;
    }
    const llama_vocab * vocab = llama_model_get_vocab(model.get());

    llama_sampler_ptr greedy(llama_sampler_init_greedy());
    llama_batch batch = llama_batch_get_one(prompt.data(), static_cast<int32_t>(prompt.size()));
    std::string out;
    llama_token next = 0;
    for (int i = 0; i < n_predict; i++) {
        if (llama_decode(ctx.get(), batch) != 0) {
            std::fprintf(stderr, "decode failed\n");
            return 1;
        }
        next = llama_sampler_sample(greedy.get(), ctx.get(), -1);
        if (llama_vocab_is_eog(vocab, next)) {
            break;
        }
        out += (out.empty() ? "" : ",") + std::to_string(next);
        batch = llama_batch_get_one(&next, 1);
    }
    std::printf("%s\n", out.c_str());
    return 0;
}
