// Reference greedy loop written straight against llama.cpp's C API, for the test suite: the
// addon's autoregressive path must emit exactly these token ids.
//
//   power-reference <model.gguf> <n_predict> <n_ctx> <token,token,...>
// prints the generated token ids, comma-separated, on one line.

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "ggml-backend.h"
#include "llama.h"

static void quiet(ggml_log_level, const char *, void *) {}

int main(int argc, char ** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s model.gguf n_predict n_ctx tok,tok,...\n", argv[0]);
        return 2;
    }
    const std::string exe = argv[0];
    const std::string dir = exe.find_last_of('/') == std::string::npos ? "." : exe.substr(0, exe.find_last_of('/'));
    const int n_predict   = std::atoi(argv[2]);
    const int n_ctx       = std::atoi(argv[3]);
    std::vector<llama_token> prompt;
    std::stringstream ss(argv[4]);
    for (std::string item; std::getline(ss, item, ',');) {
        prompt.push_back(std::atoi(item.c_str()));
    }

    llama_log_set(quiet, nullptr);
    llama_backend_init();
    ggml_backend_load_all_from_path(dir.c_str());

    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers       = 0;
    llama_model * model   = llama_model_load_from_file(argv[1], mp);
    if (!model) {
        std::fprintf(stderr, "load failed\n");
        return 1;
    }
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx                = n_ctx;
    cp.n_batch              = n_ctx;
    cp.n_threads            = 1; // tiny test models: more threads only add spin-waiting
    cp.n_threads_batch      = 1;
    llama_context * ctx     = llama_init_from_model(model, cp);
    const llama_vocab * vocab = llama_model_get_vocab(model);

    llama_sampler * greedy = llama_sampler_init_greedy();
    llama_batch batch      = llama_batch_get_one(prompt.data(), static_cast<int32_t>(prompt.size()));
    std::string out;
    for (int i = 0; i < n_predict; i++) {
        if (llama_decode(ctx, batch) != 0) {
            std::fprintf(stderr, "decode failed\n");
            return 1;
        }
        llama_token tok = llama_sampler_sample(greedy, ctx, -1);
        if (llama_vocab_is_eog(vocab, tok)) {
            break;
        }
        out += (out.empty() ? "" : ",") + std::to_string(tok);
        static llama_token next;
        next  = tok;
        batch = llama_batch_get_one(&next, 1);
    }
    std::printf("%s\n", out.c_str());
    llama_sampler_free(greedy);
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}
