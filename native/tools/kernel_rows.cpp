// Batch invariance of the CPU backend's matrix kernels, one weight type at a time: a random
// matrix (in the CPU's repacked weight buffer when the backend offers one, as llama.cpp loads
// weights, and in a plain buffer) multiplied by batches of 2 to 17 rows (a verify pass of K up
// to 16) and of 30 to 69 rows (prompt chunks), every output compared bit for bit with the same
// row multiplied alone (a decode). ggml picks other kernels by the number of rows (repacked
// gemm/gemv, llamafile's tinyBLAS/vec_dot, the IQ panel); a speculative verify row is exact only
// if each of them sums a row as the one-row kernel does.
//
//   power-kernel-rows [--threads N] [--types f32,q4_K,...]
//
// One line per weight type, buffer and matrix height: `TYPE BUFFER ROWSxCOLS: ok` or
// `TYPE BUFFER ROWSxCOLS: differs at batch widths 4 8 ... (max abs diff D)`. Exit 0 when every
// line is ok, 1 when any differs, 2 on a usage or setup error.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpp.h"
#include "ggml.h"

namespace {

constexpr int K = 2048; // the row length: 8 super-blocks of every K-quant

const std::vector<ggml_type> ALL_TYPES = {
    GGML_TYPE_F32,    GGML_TYPE_F16,    GGML_TYPE_BF16,  GGML_TYPE_Q8_0,    GGML_TYPE_Q4_0,  GGML_TYPE_Q5_0,
    GGML_TYPE_IQ4_NL, GGML_TYPE_MXFP4,  GGML_TYPE_Q2_K,  GGML_TYPE_Q3_K,    GGML_TYPE_Q4_K,  GGML_TYPE_Q5_K,
    GGML_TYPE_Q6_K,   GGML_TYPE_IQ4_XS, GGML_TYPE_IQ3_S, GGML_TYPE_IQ3_XXS, GGML_TYPE_IQ2_S,
};

// batch widths: every verify pass up to K = 16, then prompt chunks past the 16-row tiles
std::vector<int> batch_widths() {
    std::vector<int> w;
    for (int n = 2; n <= 17; n++) {
        w.push_back(n);
    }
    for (int n : {30, 43, 56, 69}) {
        w.push_back(n);
    }
    return w;
}

struct cpu_backend {
    ggml_backend_dev_t dev = nullptr;
    ggml_backend_ptr backend;
    ggml_backend_buffer_type_t plain  = nullptr;
    ggml_backend_buffer_type_t repack = nullptr;
};

cpu_backend open_cpu(int threads) {
    cpu_backend out;
    ggml_backend_dev_t dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    if (dev == nullptr) {
        return out;
    }
    out.dev = dev;
    out.backend.reset(ggml_backend_dev_init(dev, nullptr));
    out.plain              = ggml_backend_dev_buffer_type(dev);
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
    auto set_threads = reinterpret_cast<ggml_backend_set_n_threads_t>(ggml_backend_reg_get_proc_address(reg, "ggml_backend_set_n_threads"));
    if (set_threads != nullptr && out.backend) {
        set_threads(out.backend.get(), threads);
    }
    auto extra =
        reinterpret_cast<ggml_backend_dev_get_extra_bufts_t>(ggml_backend_reg_get_proc_address(reg, "ggml_backend_dev_get_extra_bufts"));
    for (ggml_backend_buffer_type_t * b = extra != nullptr ? extra(dev) : nullptr; b != nullptr && *b != nullptr; b++) {
        if (std::strcmp(ggml_backend_buft_name(*b), "CPU_REPACK") == 0) {
            out.repack = *b;
        }
    }
    return out;
}

// W (rows x K, in `buft`) times the first n rows of x: the n x rows outputs; empty when the
// buffer does not take this matrix (the repacked one has no layout for some types and heights)
std::vector<float> multiply(const cpu_backend & cpu, ggml_backend_buffer_type_t buft, ggml_type type, int rows,
                            const std::vector<uint8_t> & w, const float * x, int n) {
    ggml_init_params ip = {4 * ggml_tensor_overhead() + ggml_graph_overhead(), nullptr, true};
    ggml_context_ptr wctx(ggml_init(ip));
    ggml_tensor * W = ggml_new_tensor_2d(wctx.get(), type, K, rows);
    ggml_backend_buffer_ptr wbuf(ggml_backend_alloc_ctx_tensors_from_buft(wctx.get(), buft));
    ggml_context_ptr ctx(ggml_init(ip));
    ggml_tensor * X = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, K, n);
    ggml_tensor * Y = ggml_mul_mat(ctx.get(), W, X);
    // as llama.cpp asks before it places a weight in an extra buffer
    if (!ggml_backend_dev_supports_op(cpu.dev, Y)) {
        return {};
    }
    ggml_backend_tensor_set(W, w.data(), 0, w.size());
    ggml_cgraph * g = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(g, Y);
    ggml_backend_buffer_ptr xbuf(ggml_backend_alloc_ctx_tensors(ctx.get(), cpu.backend.get()));
    ggml_backend_tensor_set(X, x, 0, sizeof(float) * K * n);
    ggml_backend_graph_compute(cpu.backend.get(), g);
    std::vector<float> y(static_cast<size_t>(rows) * n);
    ggml_backend_tensor_get(Y, y.data(), 0, y.size() * sizeof(float));
    return y;
}

// one type, one buffer, one matrix height: the batch widths whose outputs differ from the lone rows
bool check(const cpu_backend & cpu, ggml_backend_buffer_type_t buft, const char * buft_name, ggml_type type, int rows, std::mt19937 & rng) {
    std::normal_distribution<float> normal(0.f, 1.f);
    std::vector<float> wf(static_cast<size_t>(K) * rows);
    for (float & v : wf) {
        v = normal(rng) * 0.05f;
    }
    std::vector<uint8_t> w(ggml_row_size(type, K) * rows);
    ggml_quantize_chunk(type, wf.data(), w.data(), 0, rows, K, nullptr);
    const std::vector<int> widths = batch_widths();
    const int nmax                = widths.back();
    std::vector<float> x(static_cast<size_t>(K) * nmax);
    for (float & v : x) {
        v = normal(rng);
    }
    // activations with a tie for the largest magnitude in a block, as real ones can have
    x[5]  = -4.5f;
    x[77] = 4.5f;
    std::vector<float> alone(static_cast<size_t>(rows) * nmax);
    for (int r = 0; r < nmax; r++) {
        std::vector<float> y = multiply(cpu, buft, type, rows, w, x.data() + static_cast<size_t>(r) * K, 1);
        if (y.empty()) {
            return true; // not a layout this buffer takes: nothing to check
        }
        std::copy(y.begin(), y.end(), alone.begin() + static_cast<size_t>(r) * rows);
    }
    std::vector<int> bad;
    double worst = 0;
    for (int n : widths) {
        std::vector<float> y = multiply(cpu, buft, type, rows, w, x.data(), n);
        bool differs         = false;
        for (size_t i = 0; i < y.size(); i++) {
            if (std::memcmp(&y[i], &alone[i], sizeof(float)) != 0) {
                differs = true;
                worst   = std::max(worst, static_cast<double>(std::fabs(y[i] - alone[i])));
            }
        }
        if (differs) {
            bad.push_back(n);
        }
    }
    std::printf("%s %s %dx%d: ", ggml_type_name(type), buft_name, rows, K);
    if (bad.empty()) {
        std::printf("ok\n");
    } else {
        std::printf("differs at batch widths");
        for (int n : bad) {
            std::printf(" %d", n);
        }
        std::printf(" (max abs diff %g)\n", worst);
    }
    return bad.empty();
}

} // namespace

int main(int argc, char ** argv) {
    int threads                  = 2;
    std::vector<ggml_type> types = ALL_TYPES;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if (a == "--threads" && i + 1 < argc) {
            threads = std::atoi(argv[++i]);
        } else if (a == "--types" && i + 1 < argc) {
            types.clear();
            std::stringstream ss(argv[++i]);
            for (std::string name; std::getline(ss, name, ',');) {
                auto t = std::find_if(ALL_TYPES.begin(), ALL_TYPES.end(), [&](ggml_type t) { return name == ggml_type_name(t); });
                if (t == ALL_TYPES.end()) {
                    std::fprintf(stderr, "power-kernel-rows: unknown type %s\n", name.c_str());
                    return 2;
                }
                types.push_back(*t);
            }
        } else {
            std::fprintf(stderr, "usage: power-kernel-rows [--threads N] [--types f32,q4_K,...]\n");
            return 2;
        }
    }
    if (threads < 1) {
        std::fprintf(stderr, "power-kernel-rows: --threads must be at least 1\n");
        return 2;
    }
    const std::string self = argv[0];
    const auto slash       = self.find_last_of('/');
    ggml_log_set([](ggml_log_level, const char *, void *) {}, nullptr);
    ggml_backend_load_all_from_path(slash == std::string::npos ? "." : self.substr(0, slash).c_str());
    cpu_backend cpu = open_cpu(threads);
    if (!cpu.backend) {
        std::fprintf(stderr, "power-kernel-rows: no CPU backend\n");
        return 2;
    }
    std::mt19937 rng(42);
    bool all_ok = true;
    for (ggml_type type : types) {
        // heights: a multiple of 16 (every tile), of 4 only, and of neither (the fallbacks)
        for (int rows : {640, 100, 262}) {
            all_ok = check(cpu, cpu.plain, "plain", type, rows, rng) && all_ok;
            if (cpu.repack != nullptr) {
                all_ok = check(cpu, cpu.repack, "repacked", type, rows, rng) && all_ok;
            }
        }
    }
    return all_ok ? 0 : 1;
}
