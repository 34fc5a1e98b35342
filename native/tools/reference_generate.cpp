// Reference greedy loop written straight against llama.cpp's C API, for the test suite: the
// addon's autoregressive path must emit exactly these token ids.
//
//   power-reference <model.gguf> <n_predict> <n_ctx> <token,token,...>
// prints the generated token ids, comma-separated, on one line.

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "greedy_loop.h"
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
    const auto out = power_tool::greedy_loop(ctx.get(), prompt, n_predict, [](int) {});
    if (!out) {
        return 1;
    }
    std::printf("%s\n", power_tool::token_list(*out).c_str());
    return 0;
}
