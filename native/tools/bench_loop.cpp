// The bare C-API decode loop, as a benchmark runner: the fastest a plain llama.cpp program gets
// on the same libraries, for bench/speculative.ts to hold Power's autoregressive path against.
// Greedy, one token per llama_decode, no streaming, no checkpoints.
//
//   power-bench-loop <model.gguf> <n_predict> <n_ctx> <token,token,...> <threads> [auto|pool:POLL] [swa-full|swa-ring]
//
// `auto`: llama.cpp's default (each graph makes and joins its own worker threads);
// `pool:POLL`: one persistent ggml threadpool (llama_attach_threadpool) with that polling level
// (0: workers sleep between graphs; 50: llama.cpp's default spin). `swa-ring`: the sliding-window
// layers' cache as a ring of the window, as llama-server keeps it (default `swa-full`, the C API's
// and Power's). Prints one JSON line:
// {"tokens":[...],"prefillMs":x,"decodeMs":y,"decodeTokensPerSecond":z,"stepMsMedian":w}
// where decode covers every token after the first (tokens after the first / time after it).

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ggml-cpu.h"
#include "greedy_loop.h"
#include "tool_setup.h"

int main(int argc, char ** argv) {
    if (argc < 6 || argc > 8) {
        std::fprintf(stderr, "usage: %s model.gguf n_predict n_ctx tok,tok,... threads [auto|pool:POLL] [swa-full|swa-ring]\n", argv[0]);
        return 2;
    }
    const int n_predict             = std::atoi(argv[2]);
    const int n_ctx                 = std::atoi(argv[3]);
    const int n_threads             = std::atoi(argv[5]);
    const std::string mode          = argc > 6 ? argv[6] : "auto";
    const bool swa_ring             = argc > 7 && std::string(argv[7]) == "swa-ring";
    std::vector<llama_token> prompt = power_tool::parse_tokens(argv[4]);
    if (n_predict < 2 || n_ctx < 16 || n_threads < 1 || prompt.empty() || (mode != "auto" && mode.rfind("pool:", 0) != 0)) {
        std::fprintf(stderr, "bad arguments\n");
        return 2;
    }

    llama_model_ptr model = power_tool::load_cpu_model(argv[0], argv[1]);
    if (!model) {
        return 1;
    }
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx                = n_ctx;
    cp.n_batch              = std::min(n_ctx, 512);
    cp.n_threads            = n_threads;
    cp.n_threads_batch      = n_threads;
    cp.no_perf              = true;
    // the C API's default keeps a full-size sliding-window cache (as Power's sessions do);
    // llama-server's (common_params) keeps a ring of the window
    cp.swa_full = !swa_ring;
    // declared before the context, so that it is freed after it
    using pool_free_fn = void (*)(ggml_threadpool_t);
    std::unique_ptr<ggml_threadpool, pool_free_fn> pool(nullptr, nullptr);
    llama_context_ptr ctx(llama_init_from_model(model.get(), cp));
    if (!ctx) {
        std::fprintf(stderr, "context failed\n");
        return 1;
    }

    if (mode != "auto") {
        ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
        ggml_backend_reg_t reg = cpu ? ggml_backend_dev_backend_reg(cpu) : nullptr;
        auto * pool_new = reg ? (decltype(ggml_threadpool_new) *)ggml_backend_reg_get_proc_address(reg, "ggml_threadpool_new") : nullptr;
        auto pool_free  = reg ? (pool_free_fn)ggml_backend_reg_get_proc_address(reg, "ggml_threadpool_free") : nullptr;
        if (!pool_new || !pool_free) {
            std::fprintf(stderr, "the CPU backend exports no threadpool functions\n");
            return 1;
        }
        ggml_threadpool_params tpp = ggml_threadpool_params_default(n_threads);
        tpp.poll                   = static_cast<uint32_t>(std::atoi(mode.c_str() + 5));
        pool                       = {pool_new(&tpp), pool_free};
        llama_attach_threadpool(ctx.get(), pool.get(), pool.get());
    }
    std::vector<double> steps;
    const int64_t t0 = llama_time_us();
    int64_t t_first  = 0;
    int64_t t_prev   = 0;
    const auto out   = power_tool::greedy_loop(ctx.get(), prompt, n_predict, [&](int i) {
        const int64_t now = llama_time_us();
        if (i == 0) {
            t_first = now;
        } else {
            steps.push_back((now - t_prev) / 1000.0);
        }
        t_prev = now;
    });
    if (!out) {
        return 1;
    }
    const double prefill_ms = (t_first - t0) / 1000.0;
    const double decode_ms  = (t_prev - t_first) / 1000.0;
    std::sort(steps.begin(), steps.end());
    const double median = steps.empty()      ? 0.0
                          : steps.size() % 2 ? steps[steps.size() / 2]
                                             : (steps[steps.size() / 2 - 1] + steps[steps.size() / 2]) / 2;
    std::printf("{\"tokens\":[%s],\"prefillMs\":%.3f,\"decodeMs\":%.3f,\"decodeTokensPerSecond\":%.3f,\"stepMsMedian\":%.4f}\n",
                power_tool::token_list(*out).c_str(), prefill_ms, decode_ms, decode_ms > 0 ? steps.size() * 1000.0 / decode_ms : 0.0,
                median);
    return 0;
}
