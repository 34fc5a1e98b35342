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
#include <mutex>
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
    // pooled tensors: rows left zero (post's job for a drawn tensor), and the rows' first
    // live_blocks blocks drawn from seed_text (another model's tensor) instead of the own name
    std::function<bool(int64_t)> zero_row;
    std::string seed_text;
    int64_t live_blocks = -1; // -1: every block
};

// splitmix64: the pooled tensors' block choice, one stream per row
uint64_t splitmix64(uint64_t & x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z          = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t hash64(const std::string & text) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}

// runs fn(begin, end) over [0, n) in `threads` contiguous parts
void parallel_for(int64_t n, int threads, const std::function<void(int64_t, int64_t)> & fn) {
    threads = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, n)));
    if (threads == 1) {
        fn(0, n);
        return;
    }
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++) {
        const int64_t b = n * t / threads, e = n * (t + 1) / threads;
        pool.emplace_back([&fn, b, e] { fn(b, e); });
    }
    for (auto & th : pool)
        th.join();
}

// where a quantized block keeps its scales (fp16): d, and dmin for the K-quants with minimums
struct block_scales_at {
    size_t d;
    long dmin; // -1: none
};
block_scales_at scales_at(ggml_type t) {
    switch (t) {
    case GGML_TYPE_Q4_K:
    case GGML_TYPE_Q5_K:
        return {0, 2};
    case GGML_TYPE_Q6_K:
        return {208, -1}; // after ql[128], qh[64], scales[16]
    case GGML_TYPE_Q8_0:
        return {0, -1};
    default:
        throw std::runtime_error(std::string("no block pool for ") + ggml_type_name(t));
    }
}

// 65,536 blocks of N(0, 1) weights quantized with ggml's reference quantizer: a pooled tensor's
// rows are random picks of them, their scales multiplied by the tensor's std (the values scale
// with d and dmin), so an 8B model costs a copy per block instead of a quantization
struct block_pool {
    ggml_type type;
    size_t block_bytes;
    int64_t n_blocks;
    std::vector<uint8_t> bytes;
};
const block_pool & pool_for(ggml_type t, int threads) {
    static std::mutex m;
    static std::map<ggml_type, std::unique_ptr<block_pool>> pools;
    std::lock_guard<std::mutex> lock(m);
    auto & p = pools[t];
    if (!p) {
        p                     = std::make_unique<block_pool>();
        p->type               = t;
        p->block_bytes        = ggml_type_size(t);
        p->n_blocks           = 65536;
        const int64_t per_row = 4096, rows = p->n_blocks * ggml_blck_size(t) / per_row;
        p->bytes.resize(static_cast<size_t>(p->n_blocks) * p->block_bytes);
        parallel_for(rows, threads, [&](int64_t b, int64_t e) {
            for (int64_t r = b; r < e; r++) {
                std::vector<float> row(per_row, 0.0f);
                add_gaussian(row, 1.0, std::string("pool/") + ggml_type_name(t) + "/" + std::to_string(r));
                ggml_quantize_chunk(t, row.data(), p->bytes.data() + r * ggml_row_size(t, per_row), 0, 1, per_row, nullptr);
            }
        });
    }
    return *p;
}

int64_t layer_of(const std::string & name) {
    int layer = -1;
    return std::sscanf(name.c_str(), "blk.%d.", &layer) == 1 ? layer : -1;
}

class model_writer {
  public:
    model_writer(uint32_t seed, dtype type, bool pooled = false) :
        seed_(seed), dtype_(type), pooled_(pooled && type != dtype::f16 && type != dtype::f32), gguf_(gguf_init_empty()) {}
    ~model_writer() { gguf_free(gguf_); }
    model_writer(const model_writer &)             = delete;
    model_writer & operator=(const model_writer &) = delete;

    gguf_context * kv() { return gguf_; }

    // Q4_K_M's use_more_bits counts: how many ffn_down and attn_v tensors the model has
    void set_counts(int n_ffn_down, int n_attn_v) {
        n_ffn_down_ = n_ffn_down;
        n_attn_v_   = n_attn_v;
    }

    tensor_def & add(const std::string & name, std::vector<int64_t> shape, init_kind kind, double value,
                     std::function<void(std::vector<float> &)> post = nullptr) {
        tensor_def t{name, std::move(shape), kind, value, std::move(post), GGML_TYPE_F32, nullptr, "", -1};
        // as tools/models/synthetic.ts matrixType(): vectors and ssm_conv1d stay F32
        const bool matrix = t.shape.size() >= 2 && name.find("ssm_conv1d") == std::string::npos;
        t.type            = matrix ? matrix_type(name, t.shape[0]) : GGML_TYPE_F32;
        defs_.push_back(std::move(t));
        return defs_.back();
    }
    tensor_def & normal(const std::string & name, std::vector<int64_t> shape, double std_dev,
                        std::function<void(std::vector<float> &)> post = nullptr) {
        return add(name, std::move(shape), init_kind::normal, std_dev, std::move(post));
    }
    bool pooled() const { return pooled_; }
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
        // draws `threads` tensors at a time, writes them in order; a pooled model draws one tensor
        // at a time on every thread (its big tensors: the embedding and the head)
        const size_t align = gguf_get_alignment(gguf_);
        size_t written     = 0;
        std::vector<std::vector<uint8_t>> bytes(defs_.size());
        const size_t step = pooled_ ? 1 : static_cast<size_t>(threads);
        for (size_t first = 0; first < defs_.size(); first += step) {
            const size_t last = std::min(defs_.size(), first + step);
            if (pooled_) {
                bytes[first] = draw(defs_[first], threads);
            } else {
                std::vector<std::thread> pool;
                for (size_t i = first; i < last; i++) {
                    pool.emplace_back([this, i, &bytes] { bytes[i] = draw(defs_[i], 1); });
                }
                for (auto & th : pool)
                    th.join();
            }
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
    // the type of a matrix under dtype_ (models.h dtype)
    ggml_type matrix_type(const std::string & name, int64_t ne0) {
        ggml_type t = GGML_TYPE_F32;
        switch (dtype_) {
        case dtype::f32:
            return GGML_TYPE_F32;
        case dtype::f16:
            return GGML_TYPE_F16;
        case dtype::q8_0:
            t = GGML_TYPE_Q8_0;
            break;
        case dtype::q6_k:
            t = GGML_TYPE_Q6_K;
            break;
        case dtype::q4_k_m: {
            // llama-quant.cpp llama_tensor_get_type for LLAMA_FTYPE_MOSTLY_Q4_K_M
            const auto more_bits = [](int i, int n) {
                return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
            };
            t = GGML_TYPE_Q4_K;
            if (name == "output.weight") {
                t = GGML_TYPE_Q6_K;
            } else if (name.find("attn_v.weight") != std::string::npos) {
                if (more_bits(i_attn_v_++, n_attn_v_)) t = GGML_TYPE_Q6_K;
            } else if (name.find("ffn_down.weight") != std::string::npos) {
                if (more_bits(i_ffn_down_++, n_ffn_down_)) t = GGML_TYPE_Q6_K;
            } else if (name.find("attn_qkv.weight") != std::string::npos) {
                t = GGML_TYPE_Q5_K;
            }
            break;
        }
        }
        if (ne0 % ggml_blck_size(t) != 0) t = ne0 % 32 == 0 ? GGML_TYPE_Q8_0 : GGML_TYPE_F16;
        return t;
    }

    // a quantized tensor from the block pool: each row's blocks picked by its own stream
    std::vector<uint8_t> draw_pooled(const tensor_def & d, int64_t n, int threads) const {
        const int64_t ne0 = d.shape[0], rows = n / ne0;
        const int64_t per_row       = ne0 / ggml_blck_size(d.type);
        const size_t row_bytes      = ggml_row_size(d.type, ne0);
        const block_pool & pool     = pool_for(d.type, threads);
        const block_scales_at at    = scales_at(d.type);
        const std::string seed_text = d.seed_text.empty() ? std::to_string(seed_) + "/" + d.name : d.seed_text;
        const uint64_t h            = hash64(seed_text);
        const int64_t live          = d.live_blocks < 0 ? per_row : std::min(per_row, d.live_blocks);
        const float scale           = static_cast<float>(d.value);
        std::vector<uint8_t> out(static_cast<size_t>(rows) * row_bytes, 0);
        parallel_for(rows, threads, [&](int64_t b, int64_t e) {
            for (int64_t r = b; r < e; r++) {
                if (d.zero_row && d.zero_row(r)) continue;
                uint64_t state = h ^ (static_cast<uint64_t>(r) * 0xd1342543de82ef95ull);
                uint8_t * row  = out.data() + r * row_bytes;
                for (int64_t k = 0; k < live; k++) {
                    const uint64_t pick = splitmix64(state) % static_cast<uint64_t>(pool.n_blocks);
                    // each block also scaled by its own factor in [0.75, 1.25): rows that picked the
                    // same pool block (a one-block row of a 128k vocabulary's head does, often)
                    // would otherwise tie exactly, and a tie's winner is up to each sampler
                    const float factor = 0.75f + static_cast<float>(splitmix64(state) >> 40) / static_cast<float>(1u << 24) * 0.5f;
                    uint8_t * blk      = row + k * pool.block_bytes;
                    std::memcpy(blk, pool.bytes.data() + pick * pool.block_bytes, pool.block_bytes);
                    const auto rescale = [&](size_t off) {
                        ggml_fp16_t h16;
                        std::memcpy(&h16, blk + off, sizeof h16);
                        h16 = ggml_fp32_to_fp16(ggml_fp16_to_fp32(h16) * scale * factor);
                        std::memcpy(blk + off, &h16, sizeof h16);
                    };
                    rescale(at.d);
                    if (at.dmin >= 0) rescale(static_cast<size_t>(at.dmin));
                }
            }
        });
        return out;
    }

    std::vector<uint8_t> draw(const tensor_def & d, int threads) const {
        int64_t n = 1;
        for (int64_t x : d.shape)
            n *= x;
        const bool quantized = d.type != GGML_TYPE_F32 && d.type != GGML_TYPE_F16;
        if (pooled_ && quantized && d.kind == init_kind::normal && !d.post) return draw_pooled(d, n, threads);
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
        } else if (quantized) {
            const int64_t ne0 = d.shape[0], rows = n / ne0;
            const size_t row_bytes = ggml_row_size(d.type, ne0);
            out.resize(static_cast<size_t>(rows) * row_bytes);
            parallel_for(rows, threads, [&](int64_t b, int64_t e) {
                ggml_quantize_chunk(d.type, data.data() + b * ne0, out.data() + b * row_bytes, 0, e - b, ne0, nullptr);
            });
        } else {
            out.resize(data.size() * sizeof(float));
            std::memcpy(out.data(), data.data(), out.size());
        }
        return out;
    }

    uint32_t seed_;
    dtype dtype_;
    bool pooled_;
    gguf_context * gguf_;
    std::vector<tensor_def> defs_;
    int n_ffn_down_ = 0, n_attn_v_ = 0, i_ffn_down_ = 0, i_attn_v_ = 0;
};

// the synthetic vocabulary padded to n tokens with fillers no prompt's text can produce (a '['
// never occurs in the check's prompts, and SentencePiece only merges into pieces of the text)
const vocab & padded_vocab(int n) {
    static std::mutex m;
    static std::map<int, std::unique_ptr<vocab>> padded;
    const vocab & base = default_vocab();
    if (n <= static_cast<int>(base.tokens.size())) return base;
    std::lock_guard<std::mutex> lock(m);
    auto & v = padded[n];
    if (!v) {
        v = std::make_unique<vocab>(base);
        for (int i = static_cast<int>(base.tokens.size()); i < n; i++) {
            char buf[24];
            std::snprintf(buf, sizeof buf, "[t%06d]", i);
            v->tokens.emplace_back(buf);
            v->scores.push_back(0.0f);
            v->types.push_back(NORMAL);
        }
    }
    return *v;
}

void general_metadata(gguf_context * kv, const char * arch, const std::string & name, dtype type) {
    gguf_set_val_str(kv, "general.architecture", arch);
    gguf_set_val_str(kv, "general.name", name.c_str());
    // llama_ftype: ALL_F32 0, MOSTLY_F16 1, MOSTLY_Q8_0 7, MOSTLY_Q4_K_M 15, MOSTLY_Q6_K 18
    const uint32_t ftype = type == dtype::f16 ? 1 : type == dtype::q8_0 ? 7 : type == dtype::q4_k_m ? 15 : type == dtype::q6_k ? 18 : 0;
    gguf_set_val_u32(kv, "general.file_type", ftype);
    if (ftype > 1) gguf_set_val_u32(kv, "general.quantization_version", GGML_QNT_VERSION);
    gguf_set_val_u32(kv, "general.alignment", 32);
}

void vocab_metadata(gguf_context * kv, int n_vocab = 0) {
    const vocab & v = padded_vocab(n_vocab);
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

// whether the output row of this token is zeroed (a special token of the synthetic vocabulary)
bool special_row(int64_t id) {
    const vocab & v = default_vocab();
    return id < static_cast<int64_t>(v.types.size()) && v.types[static_cast<size_t>(id)] != NORMAL;
}

} // namespace

const char * dtype_name(dtype t) {
    switch (t) {
    case dtype::f32:
        return "f32";
    case dtype::f16:
        return "f16";
    case dtype::q8_0:
        return "q8_0";
    case dtype::q6_k:
        return "q6_k";
    case dtype::q4_k_m:
        return "q4_k_m";
    }
    return "?";
}

bool parse_dtype(const std::string & name, dtype & out) {
    for (dtype t : {dtype::f32, dtype::f16, dtype::q8_0, dtype::q6_k, dtype::q4_k_m}) {
        if (name == dtype_name(t)) {
            out = t;
            return true;
        }
    }
    return false;
}

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

model_set matrix_models(dtype type) {
    model_set m = gpu_models("small");
    if (type == dtype::f16) return m;
    const std::string suffix = std::string("-") + dtype_name(type);
    m.target.type = m.draft.type = m.hybrid.type = type;
    if (type != dtype::q8_0) m.target.ff = m.draft.ff = 768; // K-quant rows: multiples of 256
    m.target.name += suffix;
    m.draft.name += suffix;
    m.hybrid.name += suffix;
    return m;
}

model_set user_models(const std::string & scale, double block_scale) {
    const bool full = scale != "small";
    model_set m;
    const auto user = [&](llama_spec & x, const char * name, uint32_t seed, int embd, int layers, int heads, int kv_heads, int ff) {
        x.name           = name;
        x.seed           = seed;
        x.type           = dtype::q4_k_m;
        x.embd           = embd;
        x.layers         = layers;
        x.heads          = heads;
        x.kv_heads       = kv_heads;
        x.ff             = ff;
        x.context_length = 4096;
        x.vocab          = 128256;
        x.pooled         = true;
        x.block_scale    = block_scale;
        const double w   = 1.0 / std::sqrt(static_cast<double>(embd));
        x.scales         = {1.0, 0, w, w, w};
    };
    llama_spec & d = m.draft;
    llama_spec & t = m.target;
    if (full) {
        user(d, "power-user-draft-1b", 21, 2048, 16, 32, 8, 8192);
        user(t, "power-user-target-8b", 22, 4096, 32, 32, 8, 14336);
    } else {
        user(d, "power-user-draft-small", 21, 256, 2, 4, 1, 768);
        user(t, "power-user-target-small", 22, 512, 4, 4, 1, 1536);
    }
    // logits with a spread of about 16, so the next token is as peaked as a real model's (with 4,
    // llama.cpp's draft, which samples its top 10, accepted 0.22 where Power's greedy draft
    // accepted 0.84); the target reads the same rows through its first draft-width dimensions,
    // where its token embedding is the draft's
    d.scales.output = t.scales.output = 16.0 / std::sqrt(static_cast<double>(d.embd));
    t.shared_embd                     = d.embd;
    // the residual stream's scale: every block's input and the head see it through an RMS norm, so
    // it changes no logit, but it lifts the target's smallest weights (ffn_down, 6e-5 at 8B) to
    // 0.02, where a Q4_K block's fp16 scale is a normal number: at 6e-5 it was subnormal, a few
    // steps of 6e-8, and the 8B blocks added next to nothing (draft-model acceptance 1.00 at K4)
    if (block_scale > 0) {
        const double per_sublayer = block_scale / std::sqrt(2.0 * t.layers);
        const double smallest =
            std::min(per_sublayer / std::sqrt(static_cast<double>(t.embd)), per_sublayer / (0.6 * std::sqrt(static_cast<double>(t.ff))));
        t.residual_scale = d.residual_scale = std::max(1.0, 0.02 / smallest);
    }
    t.shared_seed = d.seed;

    qwen35_spec & h = m.hybrid;
    h.name          = full ? "power-user-hybrid-9b" : "power-user-hybrid-small";
    h.seed          = 23;
    h.type          = dtype::q4_k_m;
    h.vocab         = 128256;
    h.pooled        = true;
    h.embd          = full ? 4096 : 512;
    h.trunk_layers  = full ? 32 : 4;
    // Qwen3.5's 16 heads of 256 as 32 of 128: the same width on the Flash Attention kernels the
    // pack keeps
    h.heads                   = full ? 32 : 4;
    h.kv_heads                = full ? 8 : 1;
    h.head_dim                = 128;
    h.ff                      = full ? 12288 : 1536;
    h.context_length          = 4096;
    h.full_attention_interval = 4;
    h.rope_dims               = 64;
    const int sections[4]     = {11, 11, 10, 0};
    std::copy(sections, sections + 4, h.rope_sections);
    h.conv_kernel = 4;
    h.state_size  = full ? 128 : 64;
    h.group_count = full ? 16 : 4;
    h.dt_rank     = full ? 32 : 8;
    h.inner_size  = h.state_size * h.dt_rank;
    h.scales      = context_light(h.embd);
    return m;
}

std::string describe(const llama_spec & s) {
    std::ostringstream o;
    o << "llama v1 " << s.name << " seed " << s.seed << " " << dtype_name(s.type) << " E" << s.embd << " L" << s.layers << " H" << s.heads
      << "/" << s.kv_heads << " F" << s.ff << " C" << s.context_length << " V" << (s.vocab > 0 ? s.vocab : vocab_size()) << " scales "
      << scales_text(s.scales);
    if (s.pooled) o << " pooled v2";
    if (s.block_scale > 0) o << " blocks " << s.block_scale;
    if (s.shared_embd > 0) o << " shares " << s.shared_seed << "/" << s.shared_embd;
    if (s.residual_scale != 1) o << " residual " << s.residual_scale;
    return o.str();
}

std::string describe(const qwen35_spec & s) {
    std::ostringstream o;
    o << "qwen35 v1 " << s.name << " seed " << s.seed << " " << dtype_name(s.type) << " E" << s.embd << " L" << s.trunk_layers << "+1 H"
      << s.heads << "/" << s.kv_heads << "x" << s.head_dim << " F" << s.ff << " C" << s.context_length << " fai"
      << s.full_attention_interval << " rope" << s.rope_dims << "[" << s.rope_sections[0] << "," << s.rope_sections[1] << ","
      << s.rope_sections[2] << "," << s.rope_sections[3] << "] ssm " << s.conv_kernel << "/" << s.state_size << "/" << s.group_count << "/"
      << s.dt_rank << "/" << s.inner_size << " mtp " << s.mtp_block_scale << " V" << (s.vocab > 0 ? s.vocab : vocab_size()) << " scales "
      << scales_text(s.scales);
    if (s.pooled) o << " pooled v2";
    return o.str();
}

// tools/models/synthetic.ts makeLlamaModelSpec
void write_model(const llama_spec & p, const std::string & path, int threads) {
    const int64_t E = p.embd, V = p.vocab > 0 ? p.vocab : vocab_size(), D = p.embd / p.heads;
    if (D * p.heads != E || p.heads % p.kv_heads != 0) {
        throw std::runtime_error("bad head layout for " + p.name);
    }
    if (p.shared_embd > 0 && !p.pooled) {
        throw std::runtime_error(p.name + ": a shared embedding needs pooled weights (the same quantized blocks)");
    }
    model_writer w(p.seed, p.type, p.pooled);
    w.set_counts(p.layers, p.layers);
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
    vocab_metadata(kv, p.vocab);

    const weight_scales & s = p.scales;
    double attn_out = s.attention_vo, ffn_down = s.projection;
    if (p.block_scale > 0) {
        // each block adds about block_scale / sqrt(2 L) per dimension and sublayer (the value rows
        // are about 1 per dimension, silu(gate) * up about 0.6), so the L blocks together about
        // block_scale, against the token embedding's 1
        const double per_sublayer = p.block_scale / std::sqrt(2.0 * p.layers);
        attn_out                  = per_sublayer / std::sqrt(static_cast<double>(p.heads * D)) * p.residual_scale;
        ffn_down                  = per_sublayer / (0.6 * std::sqrt(static_cast<double>(p.ff))) * p.residual_scale;
    }
    // the shared rows: the other model's blocks for its width, zero after
    const auto share = [&](tensor_def & t) {
        if (p.shared_embd <= 0) return;
        t.seed_text   = std::to_string(p.shared_seed) + "/" + t.name;
        t.live_blocks = p.shared_embd / ggml_blck_size(t.type);
    };
    share(w.normal("token_embd.weight", {E, V}, s.embedding * p.residual_scale));
    for (int i = 0; i < p.layers; i++) {
        const std::string b = "blk." + std::to_string(i) + ".";
        w.ones(b + "attn_norm.weight", {E});
        w.normal(b + "attn_q.weight", {E, p.heads * D}, s.attention_qk);
        w.normal(b + "attn_k.weight", {E, p.kv_heads * D}, s.attention_qk);
        w.normal(b + "attn_v.weight", {E, p.kv_heads * D}, s.attention_vo);
        w.normal(b + "attn_output.weight", {p.heads * D, E}, attn_out);
        w.ones(b + "ffn_norm.weight", {E});
        w.normal(b + "ffn_gate.weight", {E, p.ff}, s.projection);
        w.normal(b + "ffn_up.weight", {E, p.ff}, s.projection);
        w.normal(b + "ffn_down.weight", {p.ff, E}, ffn_down);
    }
    w.ones("output_norm.weight", {E});
    tensor_def & head = w.normal("output.weight", {E, V}, s.output, w.pooled() ? nullptr : suppress_special_rows(E));
    head.zero_row     = special_row;
    share(head);
    w.write(path, threads);
}

// tools/models/synthetic.ts makeQwen35ModelSpec: GatedDeltaNet blocks with a full-attention
// block every full_attention_interval-th, and one NextN (MTP) block after the trunk
void write_model(const qwen35_spec & p, const std::string & path, int threads) {
    const int64_t E = p.embd, V = p.vocab > 0 ? p.vocab : vocab_size(), D = p.head_dim;
    const int64_t key_dim   = static_cast<int64_t>(p.state_size) * p.group_count;
    const int64_t value_dim = static_cast<int64_t>(p.state_size) * p.dt_rank;
    const int64_t conv_dim  = 2 * key_dim + value_dim;
    if (p.inner_size != value_dim) {
        throw std::runtime_error(p.name + ": ssm inner size must equal state * rank");
    }
    model_writer w(p.seed, p.type, p.pooled);
    w.set_counts(p.trunk_layers + 1, p.trunk_layers / p.full_attention_interval + 1);
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
    vocab_metadata(kv, p.vocab);

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
    w.normal("output.weight", {E, V}, s.output, w.pooled() ? nullptr : suppress_special_rows(E)).zero_row = special_row;
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
