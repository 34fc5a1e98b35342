// Batch invariance of the CPU backend's matrix kernels, one weight type at a time: a random
// matrix (in the CPU's repacked weight buffer when the backend offers one, as llama.cpp loads
// weights, and in a plain buffer) multiplied by batches of 2 to 17 rows (a verify pass of K up
// to 16) and of 30 to 69 rows (prompt chunks), every output compared bit for bit with the same
// row multiplied alone (a decode). ggml picks other kernels by the number of rows (repacked
// gemm/gemv, llamafile's tinyBLAS/vec_dot, the IQ panel); a speculative verify row is exact only
// if each of them sums a row as the one-row kernel does. The same for a Mixture-of-Experts
// layer's expert product (ggml_mul_mat_id: 8 experts, each row routed to 2 of them, the
// activations shared by the two as in the gate and up products or one per expert as in the down
// product): a batch's rows meet other rows at the same expert, a lone row meets none.
//
//   power-kernel-rows [--threads N] [--types f32,q4_K,...] [--ops mul_mat,mul_mat_id]
//   power-kernel-rows --time [--threads N] [--types ...] [--widths 1,2,...] [--rows R] [--cols C] [--reps N] [--clock wall|cpu]
//                     [--backend LIB]
//
// One line per weight type, buffer and matrix shape: `TYPE BUFFER ROWSxCOLS: ok` (mul_mat),
// `TYPE BUFFER mul_mat_id EXPERTSxROWSxCOLS shared|per-expert: ok`, or `...: differs at batch
// widths 4 8 ... (max abs diff D)`. Lines starting with `#` say what was checked with what: the
// loaded CPU backend's compiled features, the kernel ggml's dispatch (as Power's patches leave
// it) gives one row and a batch of each type and buffer on them, and whether the AVX-512 VNNI
// paired tinyBLAS kernel (ggml-cpu-llamafile-q0-pairs.patch) was among them. Exit 0 when every
// line is ok, 1 when any differs, 2 on a usage or setup error.
//
// With --time it checks nothing and times instead: each type's product with a ROWS x 2048 matrix
// (4096 rows unless --rows, 2048 columns unless --cols), in the buffer llama.cpp would load it in (repacked where the backend
// takes it, else plain), at each batch width (1 = a decode, 2 to 65 = a verify pass), one line
// `TYPE BUFFER ROWSxCOLS width N: MEDIAN us` per width, the median of --reps computes after two
// warm-up ones. Built against Power's patched ggml and against the released libraries, the two
// binaries give what one summation order costs per type (bench/kernel-tax.ts); --backend loads one
// CPU backend library (e.g. the released AVX2 variant) instead of the best one beside the binary.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpp.h"
#include "ggml.h"

namespace {

// the row length: 8 super-blocks of every K-quant (--time --cols sets another, e.g. a model's)
int K = 2048;

// a Mixture-of-Experts layer of the shape llama.cpp builds for Qwen3-MoE and the synthetic MoE
// target: each row (token) routed to EXPERTS_USED of EXPERTS expert matrices
constexpr int EXPERTS      = 8;
constexpr int EXPERTS_USED = 2;

// every weight type llama-quantize writes (TQ1_0 and TQ2_0 for ternary models)
const std::vector<ggml_type> ALL_TYPES = {
    GGML_TYPE_F32,   GGML_TYPE_F16,    GGML_TYPE_BF16,  GGML_TYPE_Q8_0,    GGML_TYPE_Q4_0,  GGML_TYPE_Q4_1,   GGML_TYPE_Q5_0,
    GGML_TYPE_Q5_1,  GGML_TYPE_IQ4_NL, GGML_TYPE_MXFP4, GGML_TYPE_Q2_K,    GGML_TYPE_Q3_K,  GGML_TYPE_Q4_K,   GGML_TYPE_Q5_K,
    GGML_TYPE_Q6_K,  GGML_TYPE_IQ4_XS, GGML_TYPE_IQ3_S, GGML_TYPE_IQ3_XXS, GGML_TYPE_IQ2_S, GGML_TYPE_IQ2_XS, GGML_TYPE_IQ2_XXS,
    GGML_TYPE_IQ1_S, GGML_TYPE_IQ1_M,  GGML_TYPE_TQ1_0, GGML_TYPE_TQ2_0,
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
    // what the loaded CPU backend was compiled for (ggml's feature names: AVX2, AVX512, ...)
    std::set<std::string> features;

    bool has(const char * feature) const { return features.count(feature) != 0; }
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
    auto features = reinterpret_cast<ggml_backend_get_features_t>(ggml_backend_reg_get_proc_address(reg, "ggml_backend_get_features"));
    for (ggml_backend_feature * f = features != nullptr ? features(reg) : nullptr; f != nullptr && f->name != nullptr; f++) {
        out.features.insert(f->name);
    }
    return out;
}

// W (rows x K, in `buft`, holding `w`) times n rows of X, as a graph ready to compute: W is set
// after the op is known to be supported, so that a repacked buffer repacks only what it takes
struct product {
    ggml_context_ptr wctx, ctx;
    ggml_backend_buffer_ptr wbuf, xbuf;
    ggml_tensor *X = nullptr, *Y = nullptr;
    ggml_cgraph * graph = nullptr;

    // false when the buffer does not take this matrix (the repacked one has no layout for some
    // types and heights), as llama.cpp asks before it places a weight in an extra buffer
    bool build(const cpu_backend & cpu, ggml_backend_buffer_type_t buft, ggml_type type, int rows, const std::vector<uint8_t> & w, int n) {
        ggml_init_params ip = {4 * ggml_tensor_overhead() + ggml_graph_overhead(), nullptr, true};
        wctx.reset(ggml_init(ip));
        ggml_tensor * W = ggml_new_tensor_2d(wctx.get(), type, K, rows);
        wbuf.reset(ggml_backend_alloc_ctx_tensors_from_buft(wctx.get(), buft));
        ctx.reset(ggml_init(ip));
        X = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, K, n);
        Y = ggml_mul_mat(ctx.get(), W, X);
        if (!ggml_backend_dev_supports_op(cpu.dev, Y)) {
            return false;
        }
        ggml_backend_tensor_set(W, w.data(), 0, w.size());
        graph = ggml_new_graph(ctx.get());
        ggml_build_forward_expand(graph, Y);
        xbuf.reset(ggml_backend_alloc_ctx_tensors(ctx.get(), cpu.backend.get()));
        return true;
    }
};

// W (rows x K, in `buft`) times the first n rows of x: the n x rows outputs; empty when the
// buffer does not take this matrix
std::vector<float> multiply(const cpu_backend & cpu, ggml_backend_buffer_type_t buft, ggml_type type, int rows,
                            const std::vector<uint8_t> & w, const float * x, int n) {
    product p;
    if (!p.build(cpu, buft, type, rows, w, n)) {
        return {};
    }
    ggml_backend_tensor_set(p.X, x, 0, sizeof(float) * K * n);
    ggml_backend_graph_compute(cpu.backend.get(), p.graph);
    std::vector<float> y(static_cast<size_t>(rows) * n);
    ggml_backend_tensor_get(p.Y, y.data(), 0, y.size() * sizeof(float));
    return y;
}

// W (EXPERTS matrices of rows x K, in `buft`) times the n rows of x, each row routed to the
// EXPERTS_USED experts `ids` names for it: the n x EXPERTS_USED x rows outputs. `shared`: one
// activation row per token for all its experts (the gate and up products); otherwise one per
// token and expert (the down product). Empty when the buffer does not take this product.
std::vector<float> multiply_id(const cpu_backend & cpu, ggml_backend_buffer_type_t buft, ggml_type type, int rows,
                               const std::vector<uint8_t> & w, const float * x, const int32_t * ids, int n, bool shared) {
    ggml_init_params ip = {4 * ggml_tensor_overhead() + ggml_graph_overhead(), nullptr, true};
    ggml_context_ptr wctx(ggml_init(ip));
    ggml_tensor * W = ggml_new_tensor_3d(wctx.get(), type, K, rows, EXPERTS);
    ggml_backend_buffer_ptr wbuf(ggml_backend_alloc_ctx_tensors_from_buft(wctx.get(), buft));
    ggml_context_ptr ctx(ggml_init(ip));
    const int per_token = shared ? 1 : EXPERTS_USED;
    ggml_tensor * X     = ggml_new_tensor_3d(ctx.get(), GGML_TYPE_F32, K, per_token, n);
    ggml_tensor * I     = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_I32, EXPERTS_USED, n);
    ggml_tensor * Y     = ggml_mul_mat_id(ctx.get(), W, X, I);
    if (!ggml_backend_dev_supports_op(cpu.dev, Y)) {
        return {};
    }
    ggml_backend_tensor_set(W, w.data(), 0, w.size());
    ggml_cgraph * g = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(g, Y);
    ggml_backend_buffer_ptr xbuf(ggml_backend_alloc_ctx_tensors(ctx.get(), cpu.backend.get()));
    ggml_backend_tensor_set(X, x, 0, sizeof(float) * K * per_token * n);
    ggml_backend_tensor_set(I, ids, 0, sizeof(int32_t) * EXPERTS_USED * n);
    ggml_backend_graph_compute(cpu.backend.get(), g);
    std::vector<float> y(static_cast<size_t>(rows) * EXPERTS_USED * n);
    ggml_backend_tensor_get(Y, y.data(), 0, y.size() * sizeof(float));
    return y;
}

enum class outcome { not_taken, ok, differs };

// a random weight matrix (`count` rows of K, as `type`) and random activations for nmax rows of
// `per_row` vectors each, with a tie for the largest magnitude in a block, as real ones can have
struct operands {
    std::vector<uint8_t> w;
    std::vector<float> x;
};

// `count` rows of K random weights as `type`, sliced from a pool quantized once per type
// (quantizing, not multiplying, is most of this tool's time for the 1- and 2-bit IQ types): from a
// random row on where the pool holds them, else the pool's rows over and over (--time's large
// matrices: the values do not matter there, only that every row is its own memory)
std::vector<uint8_t> weights(ggml_type type, int count, std::mt19937 & rng) {
    constexpr int POOL_ROWS = 1280;
    static std::map<ggml_type, std::vector<uint8_t>> pool;
    const size_t row = ggml_row_size(type, K);
    if (pool.count(type) == 0) {
        std::normal_distribution<float> normal(0.f, 1.f);
        std::vector<float> wf(static_cast<size_t>(K) * POOL_ROWS);
        for (float & v : wf) {
            v = normal(rng) * 0.05f;
        }
        std::vector<uint8_t> q(row * POOL_ROWS);
        // the 1- and 2-bit IQ types refuse to quantize without an importance matrix: a flat one
        const std::vector<float> flat(K, 1.f);
        ggml_quantize_chunk(type, wf.data(), q.data(), 0, POOL_ROWS, K, ggml_quantize_requires_imatrix(type) ? flat.data() : nullptr);
        pool[type] = std::move(q);
    }
    const std::vector<uint8_t> & p = pool[type];
    if (count > POOL_ROWS) {
        std::vector<uint8_t> out(row * count);
        for (int r = 0; r < count; r += POOL_ROWS) {
            const int n = std::min(POOL_ROWS, count - r);
            std::copy(p.begin(), p.begin() + n * row, out.begin() + r * row);
        }
        return out;
    }
    const size_t start = std::uniform_int_distribution<int>(0, POOL_ROWS - count)(rng);
    return std::vector<uint8_t>(p.begin() + start * row, p.begin() + (start + count) * row);
}

operands draw(ggml_type type, int count, int nmax, int per_row, std::mt19937 & rng) {
    std::normal_distribution<float> normal(0.f, 1.f);
    operands out;
    out.w = weights(type, count, rng);
    out.x.resize(static_cast<size_t>(K) * per_row * nmax);
    for (float & v : out.x) {
        v = normal(rng);
    }
    out.x[5]  = -4.5f;
    out.x[77] = 4.5f;
    return out;
}

// the batch widths whose outputs differ from the lone rows': `run(x, ids, n)` multiplies n rows
// (empty: the buffer does not take it), each row `out_per_row` outputs, `x_per_row` floats
template <typename Run>
outcome compare(const std::string & label, const std::vector<float> & x, const std::vector<int32_t> & ids, size_t x_per_row,
                size_t out_per_row, Run run) {
    const std::vector<int> widths = batch_widths();
    const int nmax                = widths.back();
    std::vector<float> alone(out_per_row * nmax);
    for (int r = 0; r < nmax; r++) {
        std::vector<float> y = run(x.data() + r * x_per_row, ids.data() + r * EXPERTS_USED, 1);
        if (y.empty()) {
            return outcome::not_taken; // not a layout this buffer takes: nothing to check
        }
        std::copy(y.begin(), y.end(), alone.begin() + r * out_per_row);
    }
    std::vector<int> bad;
    double worst = 0;
    for (int n : widths) {
        std::vector<float> y = run(x.data(), ids.data(), n);
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
    std::printf("%s: ", label.c_str());
    if (bad.empty()) {
        std::printf("ok\n");
        return outcome::ok;
    }
    std::printf("differs at batch widths");
    for (int n : bad) {
        std::printf(" %d", n);
    }
    std::printf(" (max abs diff %g)\n", worst);
    return outcome::differs;
}

// mul_mat, one type, one buffer, one matrix height
outcome check(const cpu_backend & cpu, ggml_backend_buffer_type_t buft, const char * buft_name, ggml_type type, int rows,
              std::mt19937 & rng) {
    const int nmax = batch_widths().back();
    // a buffer that does not take the type is known before its weights are drawn: quantizing the
    // 1- and 2-bit IQ types is most of this tool's time
    const std::vector<uint8_t> zeros(ggml_row_size(type, K) * rows);
    const std::vector<float> x1(K);
    if (multiply(cpu, buft, type, rows, zeros, x1.data(), 1).empty()) {
        return outcome::not_taken;
    }
    const operands ops = draw(type, rows, nmax, 1, rng);
    const std::vector<int32_t> no_ids(static_cast<size_t>(EXPERTS_USED) * nmax);
    const std::string label = std::string(ggml_type_name(type)) + " " + buft_name + " " + std::to_string(rows) + "x" + std::to_string(K);
    return compare(label, ops.x, no_ids, K, rows,
                   [&](const float * x, const int32_t *, int n) { return multiply(cpu, buft, type, rows, ops.w, x, n); });
}

// mul_mat_id, one type, one buffer, one expert height, shared or per-expert activations: each row
// to EXPERTS_USED distinct experts drawn at random, so the rows of a batch share experts in
// changing groups (a verify pass's tokens mostly agree on their experts; a prompt's spread)
outcome check_id(const cpu_backend & cpu, ggml_backend_buffer_type_t buft, const char * buft_name, ggml_type type, int rows, bool shared,
                 std::mt19937 & rng) {
    const int nmax      = batch_widths().back();
    const int per_token = shared ? 1 : EXPERTS_USED;
    const std::vector<uint8_t> zeros(ggml_row_size(type, K) * rows * EXPERTS);
    const std::vector<float> x1(static_cast<size_t>(K) * per_token);
    const std::vector<int32_t> ids1 = {0, 1};
    if (multiply_id(cpu, buft, type, rows, zeros, x1.data(), ids1.data(), 1, shared).empty()) {
        return outcome::not_taken;
    }
    const operands ops = draw(type, rows * EXPERTS, nmax, per_token, rng);
    std::vector<int32_t> ids(static_cast<size_t>(EXPERTS_USED) * nmax);
    std::uniform_int_distribution<int32_t> expert(0, EXPERTS - 1);
    for (int t = 0; t < nmax; t++) {
        int32_t * row = ids.data() + static_cast<size_t>(t) * EXPERTS_USED;
        for (int u = 0; u < EXPERTS_USED; u++) {
            do {
                row[u] = expert(rng);
            } while (std::find(row, row + u, row[u]) != row + u);
        }
    }
    const std::string label = std::string(ggml_type_name(type)) + " " + buft_name + " mul_mat_id " + std::to_string(EXPERTS) + "x" +
                              std::to_string(rows) + "x" + std::to_string(K) + (shared ? " shared" : " per-expert");
    return compare(label, ops.x, ids, static_cast<size_t>(K) * per_token, static_cast<size_t>(rows) * EXPERTS_USED,
                   [&](const float * x, const int32_t * id, int n) { return multiply_id(cpu, buft, type, rows, ops.w, x, id, n, shared); });
}

bool is_x86() {
#if defined(__x86_64__) || defined(_M_X64)
    return true;
#else
    return false;
#endif
}

// the AVX-512 kernel of ggml-cpu-llamafile-q0-pairs.patch is compiled where the backend has
// AVX-512 F, VNNI, BW and DQ; ggml names only the first two (every CPU with VNNI has the others)
bool paired_compiled(const cpu_backend & cpu) {
    return is_x86() && cpu.has("LLAMAFILE") && cpu.has("AVX512") && cpu.has("AVX512_VNNI");
}

// the types ggml-cpu's IQ panel (iqp.cpp) multiplies: 8 weight rows decoded together for a batch
// of 8 rows or more, on x86 with AVX2, where iq-panel-one-order gives vec_dot the panel's order
bool iq_panel_type(ggml_type type) {
    switch (type) {
    case GGML_TYPE_IQ2_XXS:
    case GGML_TYPE_IQ2_XS:
    case GGML_TYPE_IQ2_S:
    case GGML_TYPE_IQ3_XXS:
    case GGML_TYPE_IQ3_S:
    case GGML_TYPE_IQ1_S:
    case GGML_TYPE_IQ1_M:
    case GGML_TYPE_IQ4_XS:
        return true;
    default:
        return false;
    }
}

// the kernels ggml's CPU dispatch (with Power's patches: llamafile-every-row, q0-pairs,
// iq-panel-one-order, repack-one-order) gives a product of `type` in a buffer on this backend's compiled
// features: what a lone row and what a batch of rows runs through
std::string kernels(const cpu_backend & cpu, ggml_type type, bool repacked, bool id) {
    if (repacked) {
        if (id) {
            return "every row: repack gemv";
        }
        return cpu.has("AVX512")
                   ? "1 row: repack gemv; 2+ rows: repack gemm (AVX-512 tiles of 16 rows, then AVX2 tiles of 4), gemv for the rest"
                   : "1 row: repack gemv; 2+ rows: repack gemm (4 rows a tile), gemv for the rest";
    }
    if (iq_panel_type(type) && is_x86() && (cpu.has("AVX2") || cpu.has("AVX512"))) {
        return id ? "an expert's 1-7 rows: vec_dot; 8+ rows: the IQ panel (a matrix of 8k rows)"
                  : "1-7 rows: vec_dot; 8+ rows: the IQ panel (a matrix of 8k rows; other matrices vec_dot)";
    }
    if (id) {
        return "every row: vec_dot";
    }
    if (!is_x86()) {
        return "not described on this architecture";
    }
    const bool llamafile = cpu.has("LLAMAFILE");
    const bool avx       = cpu.has("AVX") || cpu.has("AVX2") || cpu.has("AVX512");
    const char * q0      = paired_compiled(cpu) ? "tinyBLAS paired (AVX-512 VNNI)" : "tinyBLAS";
    switch (type) {
    case GGML_TYPE_F32:
        return llamafile && avx ? "every row: tinyBLAS" : "every row: vec_dot";
    case GGML_TYPE_F16:
        return llamafile && (cpu.has("AVX512") || (avx && cpu.has("F16C"))) ? "every row: tinyBLAS" : "every row: vec_dot";
    case GGML_TYPE_BF16:
        return llamafile && (cpu.has("AVX512") || cpu.has("AVX2")) ? "every row: tinyBLAS" : "every row: vec_dot";
    case GGML_TYPE_Q8_0:
    case GGML_TYPE_Q4_0:
    case GGML_TYPE_Q5_0:
        return llamafile && avx ? std::string("1 row: vec_dot; 2+ rows: ") + q0 : "every row: vec_dot";
    case GGML_TYPE_IQ4_NL:
        return llamafile && avx ? std::string("every row: ") + q0 : "every row: vec_dot";
    default:
        return "every row: vec_dot";
    }
}

// wall: the time a user waits; cpu: the process's CPU time, which a busy machine's preemptions do
// not inflate (on one thread that is the kernel's own time; on more it counts the threads' spinning)
enum class clock_kind { wall, cpu };

double now_us(clock_kind clock) {
    if (clock == clock_kind::wall) {
        return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
    }
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

// the median time in microseconds of `reps` products of W (rows x K, in `buft`) with n rows, after
// two warm-up ones; W and the activations stay resident, as a model's weights and a pass's
// activations do, so only the kernel (and the threads' dispatch) is timed. Negative when the buffer
// does not take this matrix.
double time_product(const cpu_backend & cpu, ggml_backend_buffer_type_t buft, ggml_type type, int rows, const operands & ops, int n,
                    int reps, clock_kind clock) {
    product p;
    if (!p.build(cpu, buft, type, rows, ops.w, n)) {
        return -1;
    }
    ggml_backend_tensor_set(p.X, ops.x.data(), 0, sizeof(float) * K * n);
    std::vector<double> us;
    for (int r = 0; r < reps + 2; r++) {
        const double t0 = now_us(clock);
        ggml_backend_graph_compute(cpu.backend.get(), p.graph);
        const double t1 = now_us(clock);
        if (r >= 2) {
            us.push_back(t1 - t0);
        }
    }
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
}

// --time: one line per type and width, the buffer llama.cpp would load the weights in
void time_types(const cpu_backend & cpu, const std::vector<ggml_type> & types, const std::vector<int> & widths, int rows, int reps,
                clock_kind clock, std::mt19937 & rng) {
    const int nmax = *std::max_element(widths.begin(), widths.end());
    for (ggml_type type : types) {
        if (K % ggml_blck_size(type) != 0) {
            std::printf("# %s: a row of %d is not a whole number of its %lld-value blocks\n", ggml_type_name(type), K,
                        static_cast<long long>(ggml_blck_size(type)));
            continue;
        }
        const operands ops = draw(type, rows, nmax, 1, rng);
        for (int r = 1; r >= 0; r--) {
            ggml_backend_buffer_type_t buft = r ? cpu.repack : cpu.plain;
            if (buft == nullptr) {
                continue;
            }
            std::vector<double> at;
            for (int n : widths) {
                const double us = time_product(cpu, buft, type, rows, ops, n, reps, clock);
                if (us < 0) {
                    break;
                }
                at.push_back(us);
            }
            if (at.size() != widths.size()) {
                continue; // this buffer does not take the type: the plain one does
            }
            for (size_t i = 0; i < widths.size(); i++) {
                std::printf("%s %s %dx%d width %d: %.1f us\n", ggml_type_name(type), r ? "repacked" : "plain", rows, K, widths[i], at[i]);
            }
            std::fflush(stdout);
            break;
        }
    }
}

} // namespace

int main(int argc, char ** argv) {
    int threads                  = 2;
    std::vector<ggml_type> types = ALL_TYPES;
    bool op_mul_mat = true, op_mul_mat_id = true;
    bool timing             = false;
    std::vector<int> widths = {1, 2, 4, 8, 16, 32, 65};
    int rows = 4096, reps = 20;
    std::string backend_lib;
    clock_kind clock = clock_kind::wall;
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
        } else if (a == "--time") {
            timing = true;
        } else if (a == "--widths" && i + 1 < argc) {
            widths.clear();
            std::stringstream ss(argv[++i]);
            for (std::string w; std::getline(ss, w, ',');) {
                widths.push_back(std::atoi(w.c_str()));
            }
        } else if (a == "--cols" && i + 1 < argc) {
            K = std::atoi(argv[++i]);
        } else if (a == "--rows" && i + 1 < argc) {
            rows = std::atoi(argv[++i]);
        } else if (a == "--reps" && i + 1 < argc) {
            reps = std::atoi(argv[++i]);
        } else if (a == "--clock" && i + 1 < argc) {
            const std::string c = argv[++i];
            if (c != "wall" && c != "cpu") {
                std::fprintf(stderr, "power-kernel-rows: --clock must be wall or cpu\n");
                return 2;
            }
            clock = c == "cpu" ? clock_kind::cpu : clock_kind::wall;
        } else if (a == "--backend" && i + 1 < argc) {
            backend_lib = argv[++i];
        } else if (a == "--ops" && i + 1 < argc) {
            op_mul_mat = op_mul_mat_id = false;
            std::stringstream ss(argv[++i]);
            for (std::string name; std::getline(ss, name, ',');) {
                if (name == "mul_mat") {
                    op_mul_mat = true;
                } else if (name == "mul_mat_id") {
                    op_mul_mat_id = true;
                } else {
                    std::fprintf(stderr, "power-kernel-rows: unknown op %s (mul_mat, mul_mat_id)\n", name.c_str());
                    return 2;
                }
            }
        } else {
            std::fprintf(stderr, "usage: power-kernel-rows [--threads N] [--types f32,q4_K,...] [--ops mul_mat,mul_mat_id]\n"
                                 "       power-kernel-rows --time [--threads N] [--types ...] [--widths 1,2,...] [--rows R] [--reps N] "
                                 "[--clock wall|cpu] [--backend LIB]\n");
            return 2;
        }
    }
    if (threads < 1) {
        std::fprintf(stderr, "power-kernel-rows: --threads must be at least 1\n");
        return 2;
    }
    if (K < 32 || K % 32 != 0 || (!timing && K != 2048)) {
        std::fprintf(stderr, "power-kernel-rows: --cols (with --time) must be a multiple of 32\n");
        return 2;
    }
    if (reps < 1 || rows < 1 || rows % 16 != 0 || widths.empty() ||
        std::any_of(widths.begin(), widths.end(), [](int w) { return w < 1 || w > 512; })) {
        std::fprintf(stderr, "power-kernel-rows: --reps at least 1, --rows a multiple of 16, --widths 1 to 512\n");
        return 2;
    }
    const std::string self = argv[0];
    const auto slash       = self.find_last_of('/');
    ggml_log_set([](ggml_log_level, const char *, void *) {}, nullptr);
    if (backend_lib.empty()) {
        ggml_backend_load_all_from_path(slash == std::string::npos ? "." : self.substr(0, slash).c_str());
    } else if (ggml_backend_load(backend_lib.c_str()) == nullptr) {
        std::fprintf(stderr, "power-kernel-rows: cannot load the backend library %s\n", backend_lib.c_str());
        return 2;
    }
    cpu_backend cpu = open_cpu(threads);
    if (!cpu.backend) {
        std::fprintf(stderr, "power-kernel-rows: no CPU backend\n");
        return 2;
    }
    std::printf("# cpu backend:");
    for (const std::string & f : cpu.features) {
        std::printf(" %s", f.c_str());
    }
    std::printf("\n");
    std::mt19937 rng(42);
    if (timing) {
        time_types(cpu, types, widths, rows, reps, clock, rng);
        return 0;
    }
    bool all_ok = true;
    std::vector<std::string> ran;    // the kernel lines, printed after the checks
    std::vector<std::string> paired; // the types a batch of which ran the paired kernel
    for (ggml_type type : types) {
        const std::string name = ggml_type_name(type);
        for (int id = 0; id < 2; id++) {
            if (id ? !op_mul_mat_id : !op_mul_mat) {
                continue;
            }
            bool took[2] = {false, false}; // plain, repacked
            // mul_mat heights: a multiple of 16 (every tile), of 4 only, and of neither (the
            // fallbacks); an expert's: a multiple of 8 (the repacked layouts) and of neither
            const std::vector<int> heights = id ? std::vector<int>{128, 100} : std::vector<int>{640, 100, 262};
            for (int rows : heights) {
                for (int r = 0; r < 2; r++) {
                    ggml_backend_buffer_type_t buft = r ? cpu.repack : cpu.plain;
                    if (buft == nullptr) {
                        continue;
                    }
                    const char * buft_name = r ? "repacked" : "plain";
                    for (int form = 0; form < (id ? 2 : 1); form++) {
                        const outcome o =
                            id ? check_id(cpu, buft, buft_name, type, rows, form == 0, rng) : check(cpu, buft, buft_name, type, rows, rng);
                        took[r] = took[r] || o != outcome::not_taken;
                        all_ok  = all_ok && o != outcome::differs;
                    }
                }
            }
            for (int r = 0; r < 2; r++) {
                if (!took[r]) {
                    continue;
                }
                const std::string k = kernels(cpu, type, r == 1, id == 1);
                ran.push_back("# kernels " + name + (r ? " repacked " : " plain ") + (id ? "mul_mat_id" : "mul_mat") + ": " + k);
                if (k.find("paired") != std::string::npos) {
                    paired.push_back(name);
                }
            }
        }
    }
    // derived, not traced: ggml does not say which kernel it took
    std::printf("# kernels below: ggml's CPU dispatch as Power's patches leave it, on the features above\n");
    for (const std::string & line : ran) {
        std::printf("%s\n", line.c_str());
    }
    if (!paired.empty()) {
        std::printf("# tinyBLAS paired (AVX-512 VNNI): exercised by");
        for (const std::string & name : paired) {
            std::printf(" %s", name.c_str());
        }
        std::printf("\n");
    } else {
        std::printf("# tinyBLAS paired (AVX-512 VNNI): not exercised (%s)\n",
                    !is_x86()               ? "not an x86 CPU"
                    : !cpu.has("LLAMAFILE") ? "the CPU backend was built without llamafile"
                    : !paired_compiled(cpu) ? "the CPU backend was built without AVX-512 VNNI"
                                            : "no Q8_0, Q4_0, Q5_0 or IQ4_NL matrix in a plain buffer among the types checked");
    }
    return all_ok ? 0 : 1;
}
