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

enum class dtype { f32, f16 };

struct llama_spec {
    std::string name;
    uint32_t seed = 1;
    dtype type    = dtype::f16;
    int embd = 128, layers = 4, heads = 4, kv_heads = 2, ff = 256, context_length = 4096;
    weight_scales scales;
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
};

// the pair and the hybrid of one scale (test/gpu/models.ts gpuModels): "small" or "full"
struct model_set {
    llama_spec target, draft;
    qwen35_spec hybrid;
};
model_set gpu_models(const std::string & scale);

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

} // namespace power_check
