#include "models.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "ggml.h"
#include "gguf.h"

namespace power_check {
namespace {

// ------------------------------------------------------------------ tools/models/synthetic-random.ts

// FNV-1a over the seed text (ASCII: JavaScript's UTF-16 code units are its bytes)
uint32_t hash_seed(const std::string & text) {
    uint32_t h = 0x811c9dc5u;
    for (unsigned char c : text) {
        h ^= c;
        h *= 0x01000193u;
    }
    return h;
}

struct mulberry32 {
    uint32_t a;
    explicit mulberry32(uint32_t seed) : a(seed) {}
    double next() {
        a += 0x6d2b79f5u;
        uint32_t t = (a ^ (a >> 15)) * (1u | a);
        t          = (t + ((t ^ (t >> 7)) * (61u | t))) ^ t;
        return static_cast<double>(t ^ (t >> 14)) / 4294967296.0;
    }
};

// adds std * N(0, 1) (Box-Muller, in double as JavaScript computes it) drawn from seed_text
void add_gaussian(std::vector<float> & out, double std_dev, const std::string & seed_text) {
    mulberry32 rng(hash_seed(seed_text));
    const double two_pi = 2 * M_PI;
    for (size_t i = 0; i < out.size(); i += 2) {
        const double r     = std::sqrt(-2 * std::log(1 - rng.next())) * std_dev;
        const double theta = two_pi * rng.next();
        out[i]             = static_cast<float>(static_cast<double>(out[i]) + r * std::cos(theta));
        if (i + 1 < out.size()) {
            out[i + 1] = static_cast<float>(static_cast<double>(out[i + 1]) + r * std::sin(theta));
        }
    }
}

// ------------------------------------------------------------------ app/models/vocab.ts

enum token_type : int32_t { NORMAL = 1, UNKNOWN = 2, CONTROL = 3, BYTE = 6 };

const char * const SPACE = "\xe2\x96\x81"; // U+2581, SentencePiece's leading-space marker

const char * const DEFAULT_WORDS[] = {
    "the",   "and",   "of",    "to",    "a",      "in",    "is",    "it",     "you",    "that",  "he",     "was",      "for",   "on",
    "are",   "with",  "as",    "I",     "his",    "they",  "be",    "at",     "one",    "have",  "this",   "from",     "or",    "had",
    "by",    "not",   "but",   "what",  "all",    "were",  "we",    "when",   "your",   "can",   "said",   "there",    "use",   "an",
    "each",  "which", "she",   "do",    "how",    "their", "if",    "will",   "up",     "other", "about",  "out",      "many",  "then",
    "them",  "these", "so",    "some",  "her",    "would", "make",  "like",   "him",    "into",  "time",   "has",      "look",  "two",
    "more",  "write", "go",    "see",   "number", "no",    "way",   "could",  "people", "my",    "than",   "first",    "water", "been",
    "call",  "who",   "now",   "find",  "long",   "down",  "day",   "did",    "get",    "come",  "made",   "may",      "part",  "hello",
    "world", "power", "model", "token", "fast",   "speed", "draft", "target", "test",   "chat",  "answer", "question", "yes",   "story",
    "quick", "brown", "fox",   "jumps", "over",   "lazy",  "dog",
};

const char * const CHAT_TEMPLATE =
    "{% for m in messages %}"
    "{% if m['role'] not in ['system', 'user', 'assistant'] %}{{ raise_exception('unsupported role: ' + m['role']) }}{% endif %}"
    "<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}";

// code points of a UTF-8 string, each as its own string
std::vector<std::string> code_points(const std::string & s) {
    std::vector<std::string> out;
    for (size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        const size_t n        = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : 4;
        out.push_back(s.substr(i, n));
        i += n;
    }
    return out;
}

struct vocab {
    std::vector<std::string> tokens;
    std::vector<float> scores;
    std::vector<int32_t> types;
    uint32_t unk = 0, bos = 1, eos = 2, eot = 0;
};

const vocab & default_vocab() {
    static const vocab v = [] {
        vocab out;
        std::set<std::string> seen;
        const auto add = [&](const std::string & text, int32_t type, double score) {
            if (!seen.insert(text).second) {
                return; // llama.cpp aborts on duplicate token strings
            }
            out.tokens.push_back(text);
            out.scores.push_back(static_cast<float>(score));
            out.types.push_back(type);
        };
        add("<unk>", UNKNOWN, 0);
        add("<s>", CONTROL, 0);
        add("</s>", CONTROL, 0);
        for (int b = 0; b < 256; b++) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "<0x%02X>", b);
            add(buf, BYTE, 0);
        }
        for (const char * role : {"system", "user", "assistant"}) {
            add(std::string("<|") + role + "|>", CONTROL, 0);
        }
        add("<|end|>", CONTROL, 0);
        out.eot = static_cast<uint32_t>(out.tokens.size() - 1);

        std::vector<std::string> normal = {SPACE};
        for (char c = 'a'; c <= 'z'; c++)
            normal.emplace_back(1, c);
        for (char c = 'A'; c <= 'Z'; c++)
            normal.emplace_back(1, c);
        for (char c = '0'; c <= '9'; c++)
            normal.emplace_back(1, c);
        for (const char * p : {".", ",", "!", "?", ":", ";", "'", "\"", "-", "(", ")"})
            normal.emplace_back(p);
        for (char c = 'a'; c <= 'z'; c++)
            normal.push_back(std::string(SPACE) + c);
        const auto prefixes_from_second = [&](const std::string & word) {
            const std::vector<std::string> chars = code_points(word);
            std::string acc;
            for (size_t i = 0; i < chars.size(); i++) {
                acc += chars[i];
                if (i >= 1) normal.push_back(acc);
            }
        };
        for (const char * w : DEFAULT_WORDS) {
            prefixes_from_second(std::string(SPACE) + w);
            prefixes_from_second(w);
        }
        // merges prefer the higher score: longer pieces win, earlier (commoner) ones break ties
        for (size_t i = 0; i < normal.size(); i++) {
            add(normal[i], NORMAL, static_cast<double>(code_points(normal[i]).size()) - static_cast<double>(i) * 1e-5);
        }
        return out;
    }();
    return v;
}

// ------------------------------------------------------------------ the writer

enum class init_kind { normal, constant, negexp };

struct tensor_def {
    std::string name;
    std::vector<int64_t> shape; // ggml order: shape[0] is the fastest dimension
    init_kind kind = init_kind::normal;
    double value   = 0; // std (normal, negexp) or the constant
    std::function<void(std::vector<float> &)> post;
    ggml_type type = GGML_TYPE_F32;
};

class model_writer {
  public:
    model_writer(uint32_t seed, dtype type) : seed_(seed), dtype_(type), gguf_(gguf_init_empty()) {}
    ~model_writer() { gguf_free(gguf_); }

    gguf_context * kv() { return gguf_; }

    void add(const std::string & name, std::vector<int64_t> shape, init_kind kind, double value,
             std::function<void(std::vector<float> &)> post = nullptr) {
        tensor_def t{name, std::move(shape), kind, value, std::move(post), GGML_TYPE_F32};
        // as tools/models/synthetic.ts matrixType(): vectors and ssm_conv1d stay F32
        const bool matrix = t.shape.size() >= 2 && name.find("ssm_conv1d") == std::string::npos;
        t.type            = matrix && dtype_ == dtype::f16 ? GGML_TYPE_F16 : GGML_TYPE_F32;
        defs_.push_back(std::move(t));
    }
    void normal(const std::string & name, std::vector<int64_t> shape, double std_dev,
                std::function<void(std::vector<float> &)> post = nullptr) {
        add(name, std::move(shape), init_kind::normal, std_dev, std::move(post));
    }
    void ones(const std::string & name, std::vector<int64_t> shape) { add(name, std::move(shape), init_kind::constant, 1.0); }

    void write(const std::string & path, int threads) {
        // tensor infos from a context without data; the data is drawn and written tensor by tensor
        ggml_init_params ip = {ggml_tensor_overhead() * (defs_.size() + 1), nullptr, true};
        std::unique_ptr<ggml_context, decltype(&ggml_free)> meta(ggml_init(ip), ggml_free);
        for (const tensor_def & d : defs_) {
            ggml_tensor * t = ggml_new_tensor(meta.get(), d.type, static_cast<int>(d.shape.size()), d.shape.data());
            ggml_set_name(t, d.name.c_str());
            gguf_add_tensor(gguf_, t);
        }
        const std::string tmp = path + ".tmp";
        if (!gguf_write_to_file(gguf_, tmp.c_str(), true)) {
            throw std::runtime_error("could not write " + tmp);
        }
        std::FILE * f = std::fopen(tmp.c_str(), "ab");
        if (!f) {
            throw std::runtime_error("could not append to " + tmp);
        }
        // draws `threads` tensors at a time, writes them in order
        const size_t align = gguf_get_alignment(gguf_);
        size_t written     = 0;
        std::vector<std::vector<uint8_t>> bytes(defs_.size());
        for (size_t first = 0; first < defs_.size(); first += static_cast<size_t>(threads)) {
            const size_t last = std::min(defs_.size(), first + static_cast<size_t>(threads));
            std::vector<std::thread> pool;
            for (size_t i = first; i < last; i++) {
                pool.emplace_back([this, i, &bytes] { bytes[i] = draw(defs_[i]); });
            }
            for (auto & th : pool)
                th.join();
            for (size_t i = first; i < last; i++) {
                const size_t offset = gguf_get_tensor_offset(gguf_, static_cast<int64_t>(i));
                if (offset < written) {
                    std::fclose(f);
                    throw std::runtime_error("tensor offsets out of order in " + path);
                }
                const std::vector<uint8_t> pad(offset - written, 0);
                std::fwrite(pad.data(), 1, pad.size(), f);
                std::fwrite(bytes[i].data(), 1, bytes[i].size(), f);
                written = offset + bytes[i].size();
                std::vector<uint8_t>().swap(bytes[i]);
            }
        }
        const size_t tail = (align - written % align) % align;
        const std::vector<uint8_t> pad(tail, 0);
        std::fwrite(pad.data(), 1, pad.size(), f);
        const bool ok = std::fflush(f) == 0 && !std::ferror(f);
        std::fclose(f);
        if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
            throw std::runtime_error("could not write " + path);
        }
    }

  private:
    std::vector<uint8_t> draw(const tensor_def & d) const {
        int64_t n = 1;
        for (int64_t x : d.shape)
            n *= x;
        std::vector<float> data(static_cast<size_t>(n), 0.0f);
        if (d.kind == init_kind::constant) {
            std::fill(data.begin(), data.end(), static_cast<float>(d.value));
        } else {
            add_gaussian(data, d.value, std::to_string(seed_) + "/" + d.name);
        }
        if (d.kind == init_kind::negexp) {
            for (float & x : data)
                x = static_cast<float>(-std::exp(static_cast<double>(x)));
        }
        if (d.post) d.post(data);
        std::vector<uint8_t> out;
        if (d.type == GGML_TYPE_F16) {
            out.resize(data.size() * sizeof(ggml_fp16_t));
            ggml_fp32_to_fp16_row(data.data(), reinterpret_cast<ggml_fp16_t *>(out.data()), n);
        } else {
            out.resize(data.size() * sizeof(float));
            std::memcpy(out.data(), data.data(), out.size());
        }
        return out;
    }

    uint32_t seed_;
    dtype dtype_;
    gguf_context * gguf_;
    std::vector<tensor_def> defs_;
};

void general_metadata(gguf_context * kv, const char * arch, const std::string & name, dtype type) {
    gguf_set_val_str(kv, "general.architecture", arch);
    gguf_set_val_str(kv, "general.name", name.c_str());
    gguf_set_val_u32(kv, "general.file_type", type == dtype::f16 ? 1 : 0); // MOSTLY_F16 | ALL_F32
    gguf_set_val_u32(kv, "general.alignment", 32);
}

void vocab_metadata(gguf_context * kv) {
    const vocab & v = default_vocab();
    std::vector<const char *> texts;
    for (const auto & t : v.tokens)
        texts.push_back(t.c_str());
    gguf_set_val_str(kv, "tokenizer.ggml.model", "llama");
    gguf_set_arr_str(kv, "tokenizer.ggml.tokens", texts.data(), texts.size());
    gguf_set_arr_data(kv, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, v.scores.data(), v.scores.size());
    gguf_set_arr_data(kv, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, v.types.data(), v.types.size());
    gguf_set_val_u32(kv, "tokenizer.ggml.bos_token_id", v.bos);
    gguf_set_val_u32(kv, "tokenizer.ggml.eos_token_id", v.eos);
    gguf_set_val_u32(kv, "tokenizer.ggml.unknown_token_id", v.unk);
    gguf_set_val_u32(kv, "tokenizer.ggml.eot_token_id", v.eot);
    gguf_set_val_bool(kv, "tokenizer.ggml.add_bos_token", true);
    gguf_set_val_bool(kv, "tokenizer.ggml.add_eos_token", false);
    gguf_set_val_str(kv, "tokenizer.chat_template", CHAT_TEMPLATE);
}

// zeroes the output rows of non-NORMAL tokens: their logit is exactly 0, far below the winners
std::function<void(std::vector<float> &)> suppress_special_rows(int64_t embd) {
    return [embd](std::vector<float> & data) {
        const vocab & v = default_vocab();
        for (size_t id = 0; id < v.types.size(); id++) {
            if (v.types[id] != NORMAL) {
                std::fill(data.begin() + static_cast<int64_t>(id) * embd, data.begin() + static_cast<int64_t>(id + 1) * embd, 0.0f);
            }
        }
    };
}

std::string scales_text(const weight_scales & s) {
    std::ostringstream o;
    o.precision(17);
    o << s.embedding << "," << s.output << "," << s.attention_qk << "," << s.attention_vo << "," << s.projection;
    return o.str();
}

} // namespace

weight_scales scaled(int embd) {
    const double k = std::sqrt(128.0 / embd);
    weight_scales d;
    return {d.embedding, d.output * k, d.attention_qk * k, d.attention_vo * k, d.projection * k};
}

int vocab_size() {
    return static_cast<int>(default_vocab().tokens.size());
}

// scaled(), with the value path and the projections 4x weaker: the target then depends less on
// the context, which is what a draft that shares its first blocks (or an MTP head) can predict
static weight_scales context_light(int embd) {
    weight_scales s = scaled(embd);
    s.attention_vo /= 4;
    s.projection /= 4;
    return s;
}

model_set gpu_models(const std::string & scale) {
    const bool full = scale == "full";
    model_set m;
    // test/gpu/models.ts: the llama target's blocks are 4x weaker in their value path and FFN,
    // so the 2-block draft that shares its first blocks agrees with it most of the time
    llama_spec & t   = m.target;
    t.name           = "power-gpu-target";
    t.seed           = 11;
    t.embd           = full ? 2048 : 256;
    t.layers         = full ? 16 : 6;
    t.heads          = full ? 16 : 4;
    t.kv_heads       = full ? 4 : 2;
    t.ff             = full ? 5632 : 704;
    t.context_length = 4096;
    t.scales         = context_light(t.embd);
    m.draft          = t;
    m.draft.name     = "power-gpu-draft";
    m.draft.layers   = 2; // same seed: blocks 0-1, the embedding and the head are the target's own

    qwen35_spec & h            = m.hybrid;
    h.name                     = "power-gpu-hybrid";
    h.seed                     = 12;
    h.embd                     = full ? 1024 : 256;
    h.trunk_layers             = full ? 16 : 8;
    h.heads                    = full ? 8 : 4;
    h.kv_heads                 = 2;
    h.head_dim                 = full ? 128 : 64;
    h.ff                       = full ? 3072 : 768;
    h.context_length           = 4096;
    h.full_attention_interval  = 4; // 3 GatedDeltaNet blocks per attention block, as Qwen3.5
    h.rope_dims                = full ? 64 : 32;
    const int sections_full[4] = {11, 11, 10, 0}, sections_small[4] = {6, 5, 5, 0};
    std::copy(full ? sections_full : sections_small, (full ? sections_full : sections_small) + 4, h.rope_sections);
    h.conv_kernel = 4;
    h.state_size  = full ? 128 : 32;
    h.group_count = full ? 4 : 2;
    h.dt_rank     = full ? 8 : 4;
    h.inner_size  = full ? 1024 : 128;
    // as weak as the llama target's: with the plain scales its MTP head agreed with the trunk on 4
    // of 2,037 proposals (greedy, 300 tokens); the NextN block sees the next token's embedding and
    // the hidden row, not the context
    h.scales = context_light(h.embd);
    if (full) {
        m.target.name += "-full";
        m.draft.name += "-full";
        h.name += "-full";
    }
    return m;
}

std::string describe(const llama_spec & s) {
    std::ostringstream o;
    o << "llama v1 " << s.name << " seed " << s.seed << " " << (s.type == dtype::f16 ? "f16" : "f32") << " E" << s.embd << " L" << s.layers
      << " H" << s.heads << "/" << s.kv_heads << " F" << s.ff << " C" << s.context_length << " V" << vocab_size() << " scales "
      << scales_text(s.scales);
    return o.str();
}

std::string describe(const qwen35_spec & s) {
    std::ostringstream o;
    o << "qwen35 v1 " << s.name << " seed " << s.seed << " " << (s.type == dtype::f16 ? "f16" : "f32") << " E" << s.embd << " L"
      << s.trunk_layers << "+1 H" << s.heads << "/" << s.kv_heads << "x" << s.head_dim << " F" << s.ff << " C" << s.context_length << " fai"
      << s.full_attention_interval << " rope" << s.rope_dims << "[" << s.rope_sections[0] << "," << s.rope_sections[1] << ","
      << s.rope_sections[2] << "," << s.rope_sections[3] << "] ssm " << s.conv_kernel << "/" << s.state_size << "/" << s.group_count << "/"
      << s.dt_rank << "/" << s.inner_size << " mtp " << s.mtp_block_scale << " V" << vocab_size() << " scales " << scales_text(s.scales);
    return o.str();
}

// tools/models/synthetic.ts makeLlamaModelSpec
void write_model(const llama_spec & p, const std::string & path, int threads) {
    const int64_t E = p.embd, V = vocab_size(), D = p.embd / p.heads;
    if (D * p.heads != E || p.heads % p.kv_heads != 0) {
        throw std::runtime_error("bad head layout for " + p.name);
    }
    model_writer w(p.seed, p.type);
    gguf_context * kv = w.kv();
    general_metadata(kv, "llama", p.name, p.type);
    gguf_set_val_u32(kv, "llama.context_length", p.context_length);
    gguf_set_val_u32(kv, "llama.embedding_length", p.embd);
    gguf_set_val_u32(kv, "llama.block_count", p.layers);
    gguf_set_val_u32(kv, "llama.feed_forward_length", p.ff);
    gguf_set_val_u32(kv, "llama.attention.head_count", p.heads);
    gguf_set_val_u32(kv, "llama.attention.head_count_kv", p.kv_heads);
    gguf_set_val_f32(kv, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
    gguf_set_val_u32(kv, "llama.rope.dimension_count", static_cast<uint32_t>(D));
    gguf_set_val_f32(kv, "llama.rope.freq_base", 10000.0f);
    gguf_set_val_u32(kv, "llama.vocab_size", static_cast<uint32_t>(V));
    vocab_metadata(kv);

    const weight_scales & s = p.scales;
    w.normal("token_embd.weight", {E, V}, s.embedding);
    for (int i = 0; i < p.layers; i++) {
        const std::string b = "blk." + std::to_string(i) + ".";
        w.ones(b + "attn_norm.weight", {E});
        w.normal(b + "attn_q.weight", {E, p.heads * D}, s.attention_qk);
        w.normal(b + "attn_k.weight", {E, p.kv_heads * D}, s.attention_qk);
        w.normal(b + "attn_v.weight", {E, p.kv_heads * D}, s.attention_vo);
        w.normal(b + "attn_output.weight", {p.heads * D, E}, s.attention_vo);
        w.ones(b + "ffn_norm.weight", {E});
        w.normal(b + "ffn_gate.weight", {E, p.ff}, s.projection);
        w.normal(b + "ffn_up.weight", {E, p.ff}, s.projection);
        w.normal(b + "ffn_down.weight", {p.ff, E}, s.projection);
    }
    w.ones("output_norm.weight", {E});
    w.normal("output.weight", {E, V}, s.output, suppress_special_rows(E));
    w.write(path, threads);
}

// tools/models/synthetic.ts makeQwen35ModelSpec: GatedDeltaNet blocks with a full-attention
// block every full_attention_interval-th, and one NextN (MTP) block after the trunk
void write_model(const qwen35_spec & p, const std::string & path, int threads) {
    const int64_t E = p.embd, V = vocab_size(), D = p.head_dim;
    const int64_t key_dim   = static_cast<int64_t>(p.state_size) * p.group_count;
    const int64_t value_dim = static_cast<int64_t>(p.state_size) * p.dt_rank;
    const int64_t conv_dim  = 2 * key_dim + value_dim;
    if (p.inner_size != value_dim) {
        throw std::runtime_error(p.name + ": ssm inner size must equal state * rank");
    }
    model_writer w(p.seed, p.type);
    gguf_context * kv = w.kv();
    general_metadata(kv, "qwen35", p.name, p.type);
    gguf_set_val_u32(kv, "qwen35.context_length", p.context_length);
    gguf_set_val_u32(kv, "qwen35.embedding_length", p.embd);
    gguf_set_val_u32(kv, "qwen35.block_count", p.trunk_layers + 1);
    gguf_set_val_u32(kv, "qwen35.nextn_predict_layers", 1);
    gguf_set_val_u32(kv, "qwen35.feed_forward_length", p.ff);
    gguf_set_val_u32(kv, "qwen35.attention.head_count", p.heads);
    gguf_set_val_u32(kv, "qwen35.attention.head_count_kv", p.kv_heads);
    gguf_set_val_u32(kv, "qwen35.attention.key_length", p.head_dim);
    gguf_set_val_u32(kv, "qwen35.attention.value_length", p.head_dim);
    gguf_set_val_f32(kv, "qwen35.attention.layer_norm_rms_epsilon", 1e-6f);
    gguf_set_val_u32(kv, "qwen35.rope.dimension_count", p.rope_dims);
    gguf_set_arr_data(kv, "qwen35.rope.dimension_sections", GGUF_TYPE_INT32, p.rope_sections, 4);
    gguf_set_val_f32(kv, "qwen35.rope.freq_base", 10000000.0f);
    gguf_set_val_u32(kv, "qwen35.full_attention_interval", p.full_attention_interval);
    gguf_set_val_u32(kv, "qwen35.ssm.conv_kernel", p.conv_kernel);
    gguf_set_val_u32(kv, "qwen35.ssm.inner_size", p.inner_size);
    gguf_set_val_u32(kv, "qwen35.ssm.state_size", p.state_size);
    gguf_set_val_u32(kv, "qwen35.ssm.time_step_rank", p.dt_rank);
    gguf_set_val_u32(kv, "qwen35.ssm.group_count", p.group_count);
    gguf_set_val_u32(kv, "qwen35.vocab_size", static_cast<uint32_t>(V));
    vocab_metadata(kv);

    const weight_scales & s = p.scales;
    const auto attention    = [&](const std::string & b, double k) {
        w.normal(b + "attn_q.weight", {E, 2 * p.heads * D}, k * s.attention_qk); // query and output gate
        w.normal(b + "attn_k.weight", {E, p.kv_heads * D}, k * s.attention_qk);
        w.normal(b + "attn_v.weight", {E, p.kv_heads * D}, k * s.attention_vo);
        w.normal(b + "attn_output.weight", {p.heads * D, E}, k * s.attention_vo);
        w.ones(b + "attn_q_norm.weight", {D});
        w.ones(b + "attn_k_norm.weight", {D});
    };
    const auto ffn = [&](const std::string & b, double k) {
        w.normal(b + "ffn_gate.weight", {E, p.ff}, k * s.projection);
        w.normal(b + "ffn_up.weight", {E, p.ff}, k * s.projection);
        w.normal(b + "ffn_down.weight", {p.ff, E}, k * s.projection);
    };
    w.normal("token_embd.weight", {E, V}, s.embedding);
    for (int i = 0; i < p.trunk_layers; i++) {
        const std::string b = "blk." + std::to_string(i) + ".";
        w.ones(b + "attn_norm.weight", {E});
        w.ones(b + "post_attention_norm.weight", {E});
        if ((i + 1) % p.full_attention_interval != 0) {
            w.normal(b + "attn_qkv.weight", {E, conv_dim}, s.attention_qk);
            w.normal(b + "attn_gate.weight", {E, value_dim}, s.projection);
            w.normal(b + "ssm_conv1d.weight", {p.conv_kernel, conv_dim}, s.attention_qk);
            w.normal(b + "ssm_dt.bias", {p.dt_rank}, s.projection);
            w.add(b + "ssm_a", {p.dt_rank}, init_kind::negexp, 0.5);
            w.normal(b + "ssm_beta.weight", {E, p.dt_rank}, s.projection);
            w.normal(b + "ssm_alpha.weight", {E, p.dt_rank}, s.projection);
            w.ones(b + "ssm_norm.weight", {p.state_size});
            w.normal(b + "ssm_out.weight", {value_dim, E}, s.projection);
        } else {
            attention(b, 1.0);
        }
        ffn(b, 1.0);
    }
    const std::string m = "blk." + std::to_string(p.trunk_layers) + ".";
    w.ones(m + "attn_norm.weight", {E});
    w.ones(m + "post_attention_norm.weight", {E});
    // the NextN block sees [enorm(embedding of t+1), hnorm(hidden at t)]; eh_proj passes the
    // embedding half through and the block's own weights are small
    const double k = p.mtp_block_scale;
    attention(m, k);
    ffn(m, k);
    w.normal(m + "nextn.eh_proj.weight", {2 * E, E}, k * s.projection, [E](std::vector<float> & data) {
        for (int64_t i = 0; i < E; i++)
            data[i * 2 * E + i] += 1.0f;
    });
    w.ones(m + "nextn.enorm.weight", {E});
    w.ones(m + "nextn.hnorm.weight", {E});
    w.ones(m + "nextn.shared_head_norm.weight", {E});
    w.ones("output_norm.weight", {E});
    w.normal("output.weight", {E, V}, s.output, suppress_special_rows(E));
    w.write(path, threads);
}

template <class Spec> bool ensure_model(const Spec & s, const std::string & path, int threads) {
    const std::string want = describe(s);
    {
        std::ifstream spec(path + ".spec");
        std::ifstream model(path, std::ios::binary);
        std::string have;
        if (spec && model && std::getline(spec, have) && have == want) {
            return false;
        }
    }
    write_model(s, path, threads);
    std::ofstream(path + ".spec") << want << "\n";
    return true;
}

template bool ensure_model<llama_spec>(const llama_spec &, const std::string &, int);
template bool ensure_model<qwen35_spec>(const qwen35_spec &, const std::string &, int);

} // namespace power_check
