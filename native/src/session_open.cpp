#include "session_open.h"

#include <algorithm>
#include <vector>

#include "cpu_threads.h"
#include "log_capture.h"
#include "proposer_common_checks.h"

namespace power {

std::vector<std::string> strategy_members(const std::string & strategy) {
    std::vector<std::string> out;
    size_t from = 0;
    while (true) {
        const size_t comma = strategy.find(',', from);
        out.push_back(strategy.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
        if (comma == std::string::npos) {
            return out;
        }
        from = comma + 1;
    }
}

bool strategy_needs_draft(const std::string & strategy) {
    for (const std::string & m : strategy_members(strategy)) {
        if (m == "draft-model" || common_strategy_needs_draft(m)) {
            return true;
        }
    }
    return false;
}

bool strategy_has_member(const std::string & strategy, const std::string & member) {
    const std::vector<std::string> members = strategy_members(strategy);
    return std::find(members.begin(), members.end(), member) != members.end();
}

bool member_takes_draft(const std::string & strategy, const std::string & member) {
    if (strategy_members(strategy).size() == 1 || member == "draft-model" || common_strategy_needs_draft(member)) {
        return true;
    }
    // `mtp` drafts with a Gemma 4 assistant or a sidecar when given one: in a chain, only where
    // no other member needs the draft file
    return member == "mtp" && !strategy_needs_draft(strategy);
}

namespace {

// a draft for `mtp` that is not a Gemma 4 assistant is taken as an MTP sidecar
bool is_mtp_sidecar(const llama_model * draft) {
    char arch[64] = {};
    llama_model_meta_val_str(draft, "general.architecture", arch, sizeof arch);
    return std::string(arch) != "gemma4-assistant";
}

// the per-strategy checks, for a strategy alone or a member of a chain
std::string check_member(const std::string & strategy, const session_core & core, const model_ref & draft, bool draft_given,
                         bool mtp_loaded) {
    const bool llama_cpp_proposer = common_type_of(strategy) != COMMON_SPECULATIVE_TYPE_COUNT;
    if (strategy != "none" && strategy != "ngram" && strategy != "suffix" && strategy != "draft-model" && strategy != "mtp" &&
        !llama_cpp_proposer) {
        return "strategy '" + strategy + "' is not implemented by this engine";
    }
    if (strategy == "mtp" && draft_given) {
        // a Gemma 4 assistant beside its target (llama.cpp's draft-mtp), or an MTP sidecar (the
        // target's NextN block in a file of its own): checked here, on the JS thread, since a
        // mismatch aborts inside llama.cpp
        const std::string problem = is_mtp_sidecar(draft.get()) ? mtp_sidecar_problem(core.model.get(), draft.get(), mtp_loaded)
                                                                : mtp_assistant_problem(core.model.get(), draft.get());
        if (!problem.empty()) {
            return "strategy 'mtp' cannot run with this draft: " + problem;
        }
    } else if (strategy == "mtp") {
        // checked here, on the JS thread: an MTP context on a model without its NextN weights
        // aborts inside llama.cpp instead of failing
        if (llama_model_n_layer_nextn(core.model.get()) <= 0) {
            return "strategy 'mtp' needs a model with NextN/MTP layers; this one has none (nextn_predict_layers = 0)";
        }
        if (!mtp_loaded) {
            return "strategy 'mtp' needs the model loaded with loadMtp: true (its NextN/MTP layers were not loaded)";
        }
    }
    if ((strategy == "draft-model" || common_strategy_needs_draft(strategy)) && !draft_given) {
        return "strategy '" + strategy + "' needs a draft Model";
    }
    if (llama_cpp_proposer) {
        // checked here, on the JS thread: several mismatches abort inside llama.cpp instead of failing
        const std::string problem = common_proposer_problem(strategy, core.params.k, core.model.get(), draft.get());
        if (!problem.empty()) {
            return "strategy '" + strategy + "' cannot run: " + problem;
        }
    }
    return "";
}

// a chain's own rules: no empty, repeated or `none` member, and one draft file at most
std::string check_chain(const std::vector<std::string> & members) {
    int with_draft = 0;
    for (size_t i = 0; i < members.size(); i++) {
        const std::string & m = members[i];
        if (m.empty()) {
            return "the strategy list has an empty member";
        }
        if (m == "none") {
            return "'none' cannot be part of a strategy list (it proposes nothing; give it alone for the control)";
        }
        if (std::find(members.begin(), members.begin() + i, m) != members.begin() + i) {
            return "strategy '" + m + "' appears twice in the strategy list";
        }
        if (m == "draft-model" || common_strategy_needs_draft(m)) {
            with_draft++;
        }
    }
    if (with_draft > 1) {
        return "at most one member of a strategy list may use the draft file (a session has one --draft)";
    }
    return "";
}

} // namespace

std::string check_session(session_core & core, const model_ref & draft, bool draft_given, bool mtp_loaded) {
    static const model_ref no_draft;
    const std::string & strategy           = core.params.strategy;
    const std::vector<std::string> members = strategy_members(strategy);
    if (members.size() > 1) {
        const std::string problem = check_chain(members);
        if (!problem.empty()) {
            return problem;
        }
    }
    if (strategy != "none" && core.params.k < 1) {
        return "strategy '" + strategy + "' needs k >= 1";
    }
    if (core.params.fr_vocab > 0) {
        const int32_t n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(core.model.get()));
        if (!strategy_has_member(strategy, "mtp")) {
            return "FR (frVocab) narrows the MTP head's projection: it applies to strategy 'mtp' only, not '" + strategy + "'";
        }
        if (core.params.fr_vocab > n_vocab) {
            return "FR's draft vocabulary (" + std::to_string(core.params.fr_vocab) + " tokens) is larger than this model's vocabulary (" +
                   std::to_string(n_vocab) + " tokens)";
        }
        if (draft && member_takes_draft(strategy, "mtp") && !is_mtp_sidecar(draft.get())) {
            return "FR (frVocab) narrows a NextN head (the target's own or a sidecar's), not a Gemma 4 assistant's";
        }
    }
    const bool a_member_takes_draft =
        std::any_of(members.begin(), members.end(), [&](const std::string & m) { return member_takes_draft(strategy, m); });
    if (members.size() > 1 && draft_given && !a_member_takes_draft) {
        return "strategy '" + strategy + "' takes no draft model";
    }
    for (const std::string & m : members) {
        // in a chain the draft is its drafting member's: llama.cpp's n-gram families refuse one
        const bool own            = member_takes_draft(strategy, m);
        const model_ref & d       = own ? draft : no_draft;
        const std::string problem = check_member(m, core, d, draft_given && own, mtp_loaded);
        if (!problem.empty()) {
            return problem;
        }
    }
    core.spec.recurrent  = llama_model_is_recurrent(core.model.get()) || llama_model_is_hybrid(core.model.get());
    core.spec.k          = strategy == "none" ? 0 : core.params.k;
    core.spec.s          = core.spec.recurrent ? core.params.s : core.spec.k; // attention rows roll back freely
    core.spec.adaptive_k = core.params.adaptive_k && core.spec.k > 0;
    return "";
}

std::string open_session(session_core & core, const model_ref & draft) {
    llama_context_params cp = llama_context_default_params();
    // a verify pass is one batch and one ubatch of k + 1 rows, all with logits
    const uint32_t n_batch = std::max<uint32_t>(core.params.n_batch, core.spec.k + 1);
    cp.n_ctx               = core.params.n_ctx;
    cp.n_batch             = n_batch;
    cp.n_ubatch            = n_batch;
    cp.n_rs_seq            = core.spec.recurrent ? static_cast<uint32_t>(core.spec.s) : 0;
    cp.n_seq_max           = 1;
    // backend sampling draws every verify row in the graph: the anchor's and the K proposals'
    cp.n_outputs_max_per_seq = static_cast<uint32_t>(core.spec.k + 1);
    cp.flash_attn_type       = core.params.flash_attn;
    // a sliding-window cache of full size keeps every position in its own cell, as the
    // full-attention cache does; a ring of window + batch cells can place a verify
    // pass's rows in other cells than a one-row decode, and the attention sums would run
    // over the cells in another order (the batch invariance of build-info.ts assumes this)
    cp.swa_full = true;
    cp.no_perf  = true;
    if (core.params.n_threads <= 0) {
        core.params.n_threads = default_thread_count();
    }
    cp.n_threads       = core.params.n_threads;
    cp.n_threads_batch = core.params.n_threads;
    // lets cancel() stop a long prompt evaluation between graph nodes
    cp.abort_callback = [](void * data) {
        const auto * c = static_cast<session_core *>(data);
        return c->cancel.load() && !c->uninterruptible.load();
    };
    cp.abort_callback_data = &core;

    uint64_t mark       = log_capture_mark();
    llama_context * raw = llama_init_from_model(core.model.get(), cp);
    if (!raw) {
        std::string why = log_capture_problems_since(mark);
        return "llama.cpp could not create a context" + (why.empty() ? "" : ": " + why);
    }
    core.ctx = adopt_context(raw);
    // one persistent pool for this session's graphs (target and proposer, one at a time)
    core.pool = make_threadpool(core.params.n_threads, core.params.poll);
    if (core.pool) {
        llama_attach_threadpool(raw, core.pool.get(), core.pool.get());
    }
    // llama.cpp resolves "auto" while it creates the context and only logs the outcome
    if (cp.flash_attn_type == LLAMA_FLASH_ATTN_TYPE_AUTO) {
        if (log_capture_contains_since(mark, "Flash Attention enabled")) {
            core.flash_attn_used = "on";
        } else if (log_capture_contains_since(mark, "Flash Attention not supported")) {
            core.flash_attn_used = "off";
        }
    } else {
        core.flash_attn_used = cp.flash_attn_type == LLAMA_FLASH_ATTN_TYPE_ENABLED ? "on" : "off";
    }
    // llama.cpp caps the batch at the requested context: a verify block wider than the batch
    // writes past it, and S snapshots need a ubatch of more than S + 1 rows (a GGML_ASSERT);
    // app/runtime/spec-schedule.ts refuses these up front, this keeps every other caller safe
    if (static_cast<int32_t>(llama_n_batch(raw)) < core.spec.k + 1) {
        return "K = " + std::to_string(core.spec.k) + " needs a verify batch of " + std::to_string(core.spec.k + 1) +
               " rows but this context allows " + std::to_string(llama_n_batch(raw)) + ": lower K or raise the context size";
    }
    if (core.spec.recurrent && core.spec.s > 0 && llama_n_ubatch(raw) <= static_cast<uint32_t>(core.spec.s) + 1) {
        return "S = " + std::to_string(core.spec.s) + " needs batches of more than " + std::to_string(core.spec.s + 1) +
               " rows but this context allows " + std::to_string(llama_n_ubatch(raw)) + ": lower S or raise the context size";
    }
    core.batch = std::make_unique<batch_owner>(static_cast<int32_t>(llama_n_batch(raw)), 1);
    if (core.spec.recurrent && llama_n_rs_seq(raw) != static_cast<uint32_t>(core.spec.s)) {
        return "this model cannot keep " + std::to_string(core.spec.s) + " recurrent rollback snapshots (S)";
    }
    proposer_run_params run;
    run.n_threads      = core.params.n_threads;
    run.threadpool     = core.pool.get();
    run.flash_attn     = core.params.flash_attn;
    run.abort_callback = cp.abort_callback;
    run.abort_data     = &core;
    // p-min reads the drafter's row of logits, which backend drafting does not hand back
    run.backend_sampling = core.params.proposer_backend_sampling && core.params.p_min <= 0.0f;
    run.p_min            = core.params.p_min;
    // each member as the strategy alone would run; a member that cannot be created says why,
    // with what llama.cpp logged while it tried
    // `mtp` given a draft: a Gemma 4 assistant (llama.cpp's draft-mtp over the target's KV) or a
    // sidecar (our NextN driver on the sidecar's block)
    const model_ref mtp_draft = member_takes_draft(core.params.strategy, "mtp") ? draft : model_ref{};
    const bool assistant      = mtp_draft && !is_mtp_sidecar(mtp_draft.get());
    const auto make_member    = [&](const std::string & strategy, std::unique_ptr<proposer> & out) -> std::string {
        const uint64_t proposer_mark = log_capture_mark();
        try {
            if (strategy == "ngram") {
                out = make_proposer_ngram(1, 4);
            } else if (strategy == "suffix") {
                const size_t limit = static_cast<size_t>(core.params.suffix_store_tokens);
                out =
                    make_proposer_suffix(limit > 0 ? model_suffix_store(core.model.get(), limit, core.params.suffix_store_path) : nullptr);
            } else if (strategy == "draft-model") {
                draft_context_params dp;
                dp.n_ctx   = llama_n_ctx(raw);
                dp.n_batch = n_batch;
                dp.run     = run;
                out        = make_proposer_draft(draft, dp);
            } else if (strategy == "mtp" && !assistant) {
                out = make_proposer_mtp(mtp_draft ? mtp_draft : core.model, raw, run, core.params.fr_vocab);
            } else if (strategy == "mtp" || common_type_of(strategy) != COMMON_SPECULATIVE_TYPE_COUNT) {
                common_proposer_params pp;
                pp.strategy = strategy;
                pp.k        = core.spec.k;
                pp.draft    = draft;
                pp.run      = run;
                out         = make_proposer_common(pp, raw);
            } else {
                out = make_proposer_none();
            }
            return "";
        } catch (const std::exception & e) {
            const std::string why = log_capture_problems_since(proposer_mark);
            return e.what() + (why.empty() ? "" : ": " + why);
        }
    };
    const std::vector<std::string> members = strategy_members(core.params.strategy);
    if (members.size() == 1) {
        return make_member(members[0], core.prop);
    }
    std::vector<std::unique_ptr<proposer>> chain(members.size());
    for (size_t i = 0; i < members.size(); i++) {
        const std::string failed = make_member(members[i], chain[i]);
        if (!failed.empty()) {
            return failed;
        }
    }
    core.prop = make_proposer_chain(std::move(chain));
    return "";
}

} // namespace power
