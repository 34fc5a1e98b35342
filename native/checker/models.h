#pragma once
// The check's synthetic models, written with ggml's gguf API: the ports of
// tools/models/synthetic.ts (makeLlamaModelSpec, makeQwen35ModelSpec), app/models/vocab.ts
// (the synthetic SentencePiece vocabulary) and tools/models/synthetic-random.ts (every tensor
// drawn from its own seed, "<seed>/<tensor name>", so a draft with the target's seed shares its
// first blocks, embedding and head exactly), with the shapes of test/gpu/models.ts.

#include <cstdint>
#include <string>
#include <vector>

namespace power_check {

struct weight_scales {
    double embedding    = 1.0;
    double output       = 0.5;
    double attention_qk = 0.1;
    double attention_vo = 0.05;
    double projection   = 0.1;
};

// test/gpu/models.ts scaled(): weights shrink with sqrt(128 / E), so logits keep the spread of
// the tuned 128-wide test models
weight_scales scaled(int embd);

// the weights' type: f16, Q8_0, Q6_K, or Q4_K_M, llama.cpp's mix (llama_tensor_get_type: output Q6_K,
// attn_v and ffn_down Q6_K on use_more_bits layers, attn_qkv Q5_K, the rest Q4_K); a matrix whose
// rows are not a multiple of 256 takes Q8_0 (llama.cpp would take Q5_0 for Q4_K: one kernel family
// fewer for the pack to build)
enum class dtype { f32, f16, q8_0, q6_k, q4_k_m };
const char * dtype_name(dtype t);
bool parse_dtype(const std::string & name, dtype & out);

struct llama_spec {
    std::string name;
    uint32_t seed = 1;
    dtype type    = dtype::f16;
    int embd = 128, layers = 4, heads = 4, kv_heads = 2, ff = 256, context_length = 4096;
    weight_scales scales;
    // the user-size models (user_models): 0 = the synthetic vocabulary, more = padded with filler
    // tokens to this size; pooled: quantized matrices assembled from a pool of quantized random
    // blocks (user_models' speed: the 8B target in seconds), each scaled to its tensor's std
    int vocab   = 0;
    bool pooled = false;
    // > 0: the draft-by-construction target (user_models): weights ~ N(0, 1/fan-in), each block's
    // output projections (attn_output, ffn_down) times block_scale / sqrt(2 L), so the blocks add
    // about block_scale per dimension to a residual stream whose token embedding has 1
    double block_scale = 0;
    // > 0: token_embd and output rows hold the model of seed shared_seed and width shared_embd in
    // their first shared_embd dimensions (the same quantized blocks) and zeros after
    int shared_embd      = 0;
    uint32_t shared_seed = 0;
    // the token embedding and the blocks' output projections times this: the residual stream's
    // scale, which no logit sees (RMS norms), chosen so that no weight is too small for fp16 scales
    double residual_scale = 1;
};

struct qwen35_spec {
    std::string name;
    uint32_t seed = 4;
    dtype type    = dtype::f16;
    int embd = 128, trunk_layers = 4, heads = 4, kv_heads = 2, head_dim = 32, ff = 256, context_length = 4096;
    int full_attention_interval = 2, rope_dims = 16;
    int rope_sections[4] = {3, 3, 2, 0};
    int conv_kernel = 4, state_size = 16, group_count = 2, dt_rank = 4, inner_size = 64;
    double mtp_block_scale = 0.1;
    weight_scales scales;
    int vocab   = 0;     // as llama_spec
    bool pooled = false; // as llama_spec
};

// the pair and the hybrid of one scale (test/gpu/models.ts gpuModels): "small" or "full"
struct model_set {
    llama_spec target, draft;
    qwen35_spec hybrid;
};
model_set gpu_models(const std::string & scale);

// the exactness matrix's models in another weight type: gpu_models("small") with `type` (FFN 768
// for a K-quant llama pair, a multiple of 256) and the type in the names
model_set matrix_models(dtype type);

// the user-size speed models, Q4_K_M: scale "user" a Llama-3.1-8B-shaped target (E 4096, 32
// blocks, FFN 14,336, 32/8 heads, vocabulary 128,256), a 1B-shaped draft (E 2048, 16 blocks, FFN
// 8,192) close to it by construction (shared_embd), and a Qwen3.5-shaped hybrid of similar size
// with its MTP block; scale "small" the same construction at E 512 / 256 for the CPU rehearsal.
// block_scale: the target's and draft's block_scale (docs/testing.md: tuned for acceptance ~0.7)
model_set user_models(const std::string & scale, double block_scale);

// a stable text of the spec (the file is rewritten when it changes)
std::string describe(const llama_spec & s);
std::string describe(const qwen35_spec & s);

// writes the GGUF file (threads: how many tensors are drawn at once); throws on failure
void write_model(const llama_spec & s, const std::string & path, int threads);
void write_model(const qwen35_spec & s, const std::string & path, int threads);

// writes `path` unless `path`.spec holds `describe(s)` already; returns true when it wrote
template <class Spec> bool ensure_model(const Spec & s, const std::string & path, int threads);

// the synthetic vocabulary's size (app/models/vocab.ts makeVocab)
int vocab_size();

// the user-size models' block_scale default per scale, for greedy draft-model acceptance of about
// 0.6-0.8 (docs/testing.md: tuned on each scale on the CPU; the same value leaves the 8B pair
// closer than the small one, 0.94 where the small pair gave 0.77; 0.06 gave it 0.72 at K4)
inline double default_user_block_scale(const std::string & scale) {
    return scale == "small" ? 0.035 : 0.06;
}

} // namespace power_check
