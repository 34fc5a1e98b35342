#include "proposer_common_checks.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "llama-ext.h"   // llama_model_target_layer_ids*: the layers an artifact reads
#include "llama-model.h" // per-layer attention facts (llama_hparams), which the C API does not tell

namespace power {
namespace {

struct strategy_type {
    const char * strategy;
    common_speculative_type type;
};

// our strategy names: the artifact strategies by their family, llama.cpp's n-gram families by
// llama.cpp's own names (our `ngram` is a different algorithm and stays separate)
constexpr strategy_type strategy_types[] = {
    {"eagle3", COMMON_SPECULATIVE_TYPE_DRAFT_EAGLE3},     {"dflash", COMMON_SPECULATIVE_TYPE_DRAFT_DFLASH},
    {"dspark", COMMON_SPECULATIVE_TYPE_DRAFT_DSPARK},     {"ngram-simple", COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE},
    {"ngram-map-k", COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K}, {"ngram-map-k4v", COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K4V},
    {"ngram-mod", COMMON_SPECULATIVE_TYPE_NGRAM_MOD},     {"ngram-cache", COMMON_SPECULATIVE_TYPE_NGRAM_CACHE},
};

// target architectures whose graph in this release stores every layer's input for extraction
// (res->t_layer_inp); on any other, enabling it aborts while building the graph. Read from the
// llama.cpp source at build time, the same list the library's check uses (build-info.json)
bool exposes_layer_inputs(const std::string & arch) {
    const std::string list = std::string(",") + POWER_LAYER_INPUT_ARCHS + ",";
    return !arch.empty() && list.find("," + arch + ",") != std::string::npos;
}

std::string meta(const llama_model * model, const char * key) {
    char buf[256] = {};
    return llama_model_meta_val_str(model, key, buf, sizeof buf) >= 0 ? std::string(buf) : std::string();
}

// as common_speculative's vocabulary check, but complete: the proposals are token ids
std::string vocab_problem(const llama_model * target, const llama_model * draft) {
    const llama_vocab * vt = llama_model_get_vocab(target);
    const llama_vocab * vd = llama_model_get_vocab(draft);
    if (llama_vocab_type(vt) != llama_vocab_type(vd)) {
        return "its tokenizer type differs from the target's";
    }
    const int32_t nt = llama_vocab_n_tokens(vt);
    const int32_t nd = llama_vocab_n_tokens(vd);
    if (nt != nd) {
        return "its vocabulary has " + std::to_string(nd) + " tokens, the target's " + std::to_string(nt);
    }
    if (llama_vocab_bos(vt) != llama_vocab_bos(vd) || llama_vocab_eos(vt) != llama_vocab_eos(vd)) {
        return "its BOS/EOS tokens differ from the target's";
    }
    for (int32_t i = 0; i < nt; i++) {
        if (std::strcmp(llama_vocab_get_text(vt, i), llama_vocab_get_text(vd, i)) != 0) {
            return "its token " + std::to_string(i) + " differs from the target's";
        }
    }
    return "";
}

std::string artifact_problem(const std::string & strategy, int32_t k, const llama_model * target, const llama_model * draft) {
    const std::string arch = meta(draft, "general.architecture");
    const std::string want = strategy == "eagle3" ? "eagle3" : "dflash"; // DSpark is a DFlash GGUF with a Markov head
    if (arch != want) {
        return "the draft is a '" + arch + "' model, not " + std::string(strategy == "eagle3" ? "an " : "a ") + strategy + " artifact";
    }
    const std::string target_arch = meta(target, "general.architecture");
    if (!exposes_layer_inputs(target_arch)) {
        return "llama.cpp cannot hand the hidden states of a '" + target_arch + "' target to a draft artifact";
    }
    std::string vocab = vocab_problem(target, draft);
    if (!vocab.empty()) {
        return "the artifact does not share the target's vocabulary: " + vocab;
    }
    const int32_t n_layer_tgt = llama_model_n_layer(target);
    const int32_t n_embd_tgt  = llama_model_n_embd(target);
    const uint32_t n_ids      = llama_model_target_layer_ids_n(draft);
    const int32_t * ids       = llama_model_target_layer_ids(draft);
    if (n_ids == 0 || !ids) {
        return "the artifact names no target layers to read";
    }
    if (strategy == "eagle3" && n_ids != 3) {
        return "an eagle3 artifact reads 3 target layers, this one " + std::to_string(n_ids);
    }
    for (uint32_t i = 0; i < n_ids; i++) {
        if (ids[i] < 0 || ids[i] >= n_layer_tgt) {
            return "the artifact reads target layer " + std::to_string(ids[i]) + " but the target has layers 0.." +
                   std::to_string(n_layer_tgt - 1);
        }
    }
    if (strategy == "eagle3") {
        const std::string hidden = meta(draft, "eagle3.target_hidden_size");
        if (hidden.empty() || std::atoi(hidden.c_str()) != n_embd_tgt) {
            return "the artifact was made for a target hidden size of " + (hidden.empty() ? std::string("(unknown)") : hidden) +
                   ", this target's is " + std::to_string(n_embd_tgt);
        }
        // without its own token embeddings the decoder reads the target's, which must then fit it
        if (llama_model_get_tok_embd(draft, nullptr) == 0 && llama_model_n_embd(draft) != n_embd_tgt) {
            return "the artifact has no token embeddings of its own and its hidden size (" + std::to_string(llama_model_n_embd(draft)) +
                   ") differs from the target's (" + std::to_string(n_embd_tgt) + ")";
        }
    } else {
        // DFlash sizes the target features by its own hidden size
        if (llama_model_n_embd(draft) != n_embd_tgt) {
            return "the artifact's hidden size (" + std::to_string(llama_model_n_embd(draft)) + ") differs from the target's (" +
                   std::to_string(n_embd_tgt) + ")";
        }
        if (llama_vocab_mask(llama_model_get_vocab(draft)) == LLAMA_TOKEN_NULL) {
            return "the artifact's vocabulary has no mask token (tokenizer.ggml.mask_token_id), which " + strategy + " drafts with";
        }
        const int32_t max_k = common_strategy_max_k(strategy, draft);
        if (k > max_k) {
            return "K = " + std::to_string(k) + " is more than this " + strategy + " artifact drafts per block (" + std::to_string(max_k) +
                   ", from dflash.block_size " + meta(draft, "dflash.block_size") + "): lower K";
        }
    }
    return "";
}

// the target layer whose KV an assistant layer of this kind reads (llama.cpp's share callback
// for LLM_ARCH_GEMMA4_ASSISTANT: the target's last layer, or the one before it for sliding)
int32_t shared_target_layer(const llama_model * target, bool swa) {
    return llama_model_n_layer(target) - (swa ? 2 : 1);
}

std::string kv_layout_problem(const llama_model * target, const llama_model * draft) {
    const llama_hparams & ht = target->hparams;
    const llama_hparams & hd = draft->hparams;
    if (llama_model_n_layer(target) < 2) {
        return "the target has fewer than 2 layers, and the assistant reads its last two";
    }
    for (const bool swa : {false, true}) {
        const int32_t tl = shared_target_layer(target, swa);
        if (ht.is_swa(tl) != swa) {
            return "the assistant reads target layer " + std::to_string(tl) + " as " + (swa ? "sliding-window" : "full") +
                   " attention, but that layer is " + (swa ? "full" : "sliding-window") + " attention";
        }
    }
    if (!hd.is_swa_any()) {
        return "the assistant has no sliding-window layer (llama.cpp requires one)";
    }
    if (hd.n_swa != ht.n_swa) {
        return "the assistant was made for a sliding window of " + std::to_string(hd.n_swa) + " cells, the target's is " +
               std::to_string(ht.n_swa);
    }
    for (uint32_t il = 0; il < hd.n_layer_all; il++) {
        const bool swa     = hd.is_swa(il);
        const uint32_t tl  = static_cast<uint32_t>(shared_target_layer(target, swa));
        const char * kind  = swa ? "sliding-window" : "full-attention";
        const uint32_t hkv = hd.n_head_kv(il);
        if (hkv != ht.n_head_kv(tl) || hd.n_embd_head_k(il) != ht.n_embd_head_k(tl)) {
            return "assistant layer " + std::to_string(il) + " reads " + std::to_string(hkv) + " KV heads of size " +
                   std::to_string(hd.n_embd_head_k(il)) + ", the target's " + kind + " cache holds " + std::to_string(ht.n_head_kv(tl)) +
                   " of size " + std::to_string(ht.n_embd_head_k(tl));
        }
        if (hkv == 0 || hd.n_head(il) % hkv != 0) {
            return "assistant layer " + std::to_string(il) + " has " + std::to_string(hd.n_head(il)) + " query heads for " +
                   std::to_string(hkv) + " KV heads";
        }
    }
    return "";
}

} // namespace

std::string mtp_assistant_problem(const llama_model * target, const llama_model * draft) {
    const std::string arch = meta(draft, "general.architecture");
    if (arch != "gemma4-assistant") {
        return "the draft is a '" + arch + "' model, not a gemma4-assistant (the MTP drafter of a Gemma 4 target)";
    }
    const std::string target_arch = meta(target, "general.architecture");
    if (target_arch != "gemma4") {
        return "a gemma4-assistant drafts for a gemma4 target, this one is '" + target_arch + "'";
    }
    const std::string vocab = vocab_problem(target, draft);
    if (!vocab.empty()) {
        return "the assistant does not share the target's vocabulary: " + vocab;
    }
    // llama.cpp asserts this: the assistant reads the target's hidden rows and embeddings
    const int32_t hidden = llama_model_n_embd_out(draft);
    if (hidden != llama_model_n_embd_out(target) || hidden != llama_model_n_embd(target)) {
        return "the assistant was made for a target hidden size of " + std::to_string(hidden) +
               " (embedding_length_out), this target's is " + std::to_string(llama_model_n_embd(target));
    }
    return kv_layout_problem(target, draft);
}

std::string mtp_sidecar_problem(const llama_model * target, const llama_model * draft, bool draft_mtp_loaded) {
    const std::string arch        = meta(draft, "general.architecture");
    const std::string target_arch = meta(target, "general.architecture");
    if (llama_model_n_layer_nextn(draft) <= 0) {
        return "the draft '" + arch +
               "' model has no NextN/MTP layers (nextn_predict_layers = 0): neither a gemma4-assistant nor an MTP sidecar";
    }
    if (arch != target_arch) {
        return "the MTP sidecar is a '" + arch + "' model, the target a '" + target_arch + "' one";
    }
    if (!draft_mtp_loaded) {
        return "the MTP sidecar was loaded without its NextN/MTP layers (loadMtp: true)";
    }
    const std::string vocab = vocab_problem(target, draft);
    if (!vocab.empty()) {
        return "the MTP sidecar does not share the target's vocabulary: " + vocab;
    }
    // its head reads the target's hidden rows
    if (llama_model_n_embd_out(draft) != llama_model_n_embd_out(target)) {
        return "the MTP sidecar's hidden size (" + std::to_string(llama_model_n_embd_out(draft)) + ") differs from the target's (" +
               std::to_string(llama_model_n_embd_out(target)) + ")";
    }
    return "";
}

common_speculative_type common_type_of(const std::string & strategy) {
    for (const auto & st : strategy_types) {
        if (strategy == st.strategy) {
            return st.type;
        }
    }
    return COMMON_SPECULATIVE_TYPE_COUNT;
}

bool common_strategy_needs_draft(const std::string & strategy) {
    return strategy == "eagle3" || strategy == "dflash" || strategy == "dspark";
}

int32_t common_strategy_max_k(const std::string & strategy, const llama_model * draft) {
    if (!draft || (strategy != "dflash" && strategy != "dspark")) {
        return session_k_max;
    }
    // as common_speculative_impl_draft_dflash reads them (block size 16 when absent)
    const std::string block  = meta(draft, "dflash.block_size");
    const int32_t size       = block.empty() ? 16 : std::atoi(block.c_str());
    const std::string anchor = meta(draft, "dflash.sample_from_anchor");
    const bool from_anchor   = anchor.empty() || anchor == "true";
    return strategy == "dspark" && from_anchor ? size : size - 1;
}

std::string common_proposer_problem(const std::string & strategy, int32_t k, const llama_model * target, const llama_model * draft) {
    if (common_type_of(strategy) == COMMON_SPECULATIVE_TYPE_COUNT) {
        return "strategy '" + strategy + "' is not one of llama.cpp's proposers";
    }
    if (!common_strategy_needs_draft(strategy)) {
        return draft ? "strategy '" + strategy + "' takes no draft model" : "";
    }
    if (!draft) {
        return "strategy '" + strategy + "' needs a " + strategy + " artifact for this target";
    }
    return artifact_problem(strategy, k, target, draft);
}

} // namespace power
