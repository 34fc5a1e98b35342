// spec-reference: llama.cpp's own speculative decoding (common/speculative.cpp driven exactly as
// examples/speculative-simple does it), printing one JSON line per verify round, so Power's
// rounds can be compared with common_speculative's for the same target, artifact, prompt and K.
//
// Build: test/fixtures/spec-reference.ts (g++ against an addon folder's libllama-common,
// libllama and ggml; the prebuilt package and our from-source build are the same release).
// Run:   spec-reference --prompt-tokens 1,300,301 -m target.gguf -md draft.gguf
//          --spec-type draft-eagle3 --spec-draft-n-max 3 -n 64 --temp 0 [any llama.cpp common flag]
// (--prompt-tokens replaces -p: token ids as Power sends them, no tokenizer in between.)
//
// stdout: JSON lines, nothing else (llama.cpp logs go to stderr):
//   {"type":"header","prompt":[ids],"spec_types":["draft-eagle3"],"n_max":3,"checkpoints":false}
//   {"type":"round","round":0,"n_past":P,"id_last":T,"proposed":[ids],"accepted":A,"sampled":[ids],
//    "emitted":[ids],"restored":false,"replay":false}
//   ...
//   {"type":"summary","rounds":R,"drafted":D,"accepted":A,"tokens":[every emitted id, in order],"eos":false}
// The run stops after exactly -n emitted tokens (or an end-of-generation token): like
// speculative-simple, it asks for proposals capped to the budget left (speculative-simple itself
// emits one token more than -n). draft-dflash/draft-dspark ignore that cap (they always draft
// --spec-draft-n-max), so a last round may propose and accept past the budget: its `emitted` is
// cut at -n, `sampled` and `accepted` stay as llama.cpp computed them.
// Per round: `proposed` is what common_speculative_draft returned (possibly empty), the target
// verifies [id_last, proposed...] in one batch, `sampled` = common_sampler_sample_and_accept_n
// (the accepted prefix plus one correction/bonus token), `accepted` = sampled.size() - 1.
// `emitted` is what the round committed to the output (= sampled, cut after an end-of-generation
// token). On a target without partial rollback (recurrent/hybrid: "checkpoints":true) a round with
// a rejection restores its checkpoint and commits nothing ("restored":true, "emitted":[]); the next
// round re-evaluates `sampled` as its proposal ("replay":true), accepts all of it and adds a token.
// Only greedy runs (--temp 0) are meant for comparison: the target sampler is common_sampler.
#include "arg.h"
#include "common.h"
#include "llama.h"
#include "log.h"
#include "sampling.h"
#include "speculative.h"

#include <algorithm>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

std::string json_ids(const std::vector<llama_token> & ids) {
    std::string out = "[";
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i > 0) out += ",";
        out += std::to_string(ids[i]);
    }
    return out + "]";
}

bool parse_ids(const char * text, std::vector<llama_token> & out) {
    std::string s(text);
    size_t start = 0;
    while (start <= s.size()) {
        const size_t comma = s.find(',', start);
        const std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        char * end = nullptr;
        const long v = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || end == nullptr || *end != '\0' || v < 0) return false;
        out.push_back((llama_token) v);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return !out.empty();
}

} // namespace

int main(int argc, char ** argv) {
    std::setlocale(LC_NUMERIC, "C");

    // take our own flag out before llama.cpp's parser sees the arguments
    std::vector<llama_token> inp;
    std::vector<char *> args;
    for (int i = 0; i < argc; ++i) {
        if (std::strcmp(argv[i], "--prompt-tokens") == 0 && i + 1 < argc) {
            if (!parse_ids(argv[++i], inp)) {
                std::fprintf(stderr, "spec-reference: --prompt-tokens wants comma-separated token ids\n");
                return 2;
            }
            continue;
        }
        args.push_back(argv[i]);
    }
    if (inp.empty()) {
        std::fprintf(stderr, "spec-reference: --prompt-tokens is required\n");
        return 2;
    }

    common_params params;
    common_init();
    if (!common_params_parse((int) args.size(), args.data(), params, LLAMA_EXAMPLE_SPECULATIVE)) {
        return 2;
    }
    if (params.n_predict < 0) {
        std::fprintf(stderr, "spec-reference: -n must be >= 0\n");
        return 2;
    }

    const auto output_limits = common_speculative_get_output_limits(
            params.n_batch, params.n_parallel, common_speculative_n_max(&params.speculative));
    params.n_outputs_max         = output_limits.total;
    params.n_outputs_max_per_seq = output_limits.per_seq;

    llama_backend_init();
    llama_numa_init(params.numa);

    auto llama_init_tgt = common_init_from_params(params);
    llama_model   * model_tgt = llama_init_tgt->model();
    llama_context * ctx_tgt   = llama_init_tgt->context();
    if (model_tgt == nullptr || ctx_tgt == nullptr) {
        std::fprintf(stderr, "spec-reference: cannot load the target\n");
        return 1;
    }
    const llama_vocab * vocab = llama_model_get_vocab(model_tgt);

    common_speculative_init_result_ptr spec_init;
    {
        common_params params_dft = common_base_params_to_speculative(params);
        spec_init = common_speculative_init_from_params(params_dft, model_tgt, ctx_tgt);
        params.speculative.draft.ctx_tgt = ctx_tgt;
        params.speculative.draft.ctx_dft = spec_init->context();
    }
    llama_context * ctx_dft = params.speculative.draft.ctx_dft;

    const bool use_ckpt_tgt = common_context_can_seq_rm(ctx_tgt) == COMMON_CONTEXT_SEQ_RM_TYPE_FULL;
    const bool use_ckpt_dft = common_context_can_seq_rm(ctx_dft) == COMMON_CONTEXT_SEQ_RM_TYPE_FULL;

    if (llama_n_ctx(ctx_tgt) < (uint32_t) inp.size() || llama_n_batch(ctx_tgt) < (uint32_t) inp.size()) {
        std::fprintf(stderr, "spec-reference: the prompt exceeds the context or batch size\n");
        return 1;
    }

    {
        std::string types;
        for (size_t i = 0; i < params.speculative.types.size(); ++i) {
            if (i > 0) types += ",";
            types += "\"" + common_speculative_type_to_str(params.speculative.types[i]) + "\"";
        }
        std::printf("{\"type\":\"header\",\"prompt\":%s,\"spec_types\":[%s],\"n_max\":%d,\"checkpoints\":%s}\n",
                json_ids(inp).c_str(), types.c_str(), params.speculative.draft.n_max, use_ckpt_tgt ? "true" : "false");
        std::fflush(stdout);
    }

    const llama_seq_id seq_id = 0;
    common_sampler_ptr smpl(common_sampler_init(model_tgt, params.sampling));
    common_speculative * spec = common_speculative_init(params.speculative, 1);
    if (spec == nullptr) {
        std::fprintf(stderr, "spec-reference: failed to initialize speculative decoding\n");
        return 1;
    }

    // the prompt but its last token, fed to the speculative implementation too
    {
        llama_batch batch_prompt = llama_batch_init(inp.size(), 0, 1);
        for (size_t i = 0; i + 1 < inp.size(); ++i) {
            common_batch_add(batch_prompt, inp[i], i, { seq_id }, false);
        }
        if (batch_prompt.n_tokens > 0) {
            if (llama_decode(ctx_tgt, batch_prompt) != 0 || !common_speculative_process(spec, batch_prompt)) {
                std::fprintf(stderr, "spec-reference: prompt evaluation failed\n");
                return 1;
            }
        }
        llama_batch_free(batch_prompt);
    }

    llama_token  id_last = inp.back();
    llama_tokens prompt_tgt(inp.begin(), inp.end() - 1);
    prompt_tgt.reserve(llama_n_ctx(ctx_tgt));
    int n_past = (int) inp.size() - 1;
    common_speculative_begin(spec, seq_id, prompt_tgt);

    llama_batch batch_tgt = llama_batch_init(llama_n_batch(ctx_tgt), 0, 1);
    llama_tokens draft;
    common_prompt_checkpoint ckpt;

    std::vector<llama_token> emitted_all;
    int  n_predict = 0;
    int  n_drafted = 0;
    int  n_accept  = 0;
    int  round     = 0;
    bool has_eos   = false;
    bool replay    = false;
    int  rc        = 0;

    while (true) {
        if (draft.empty()) {
            replay = false;
            ckpt.update_pos(prompt_tgt.size(),
                    llama_memory_seq_pos_min(llama_get_memory(ctx_tgt), seq_id),
                    llama_memory_seq_pos_max(llama_get_memory(ctx_tgt), seq_id));
            if (use_ckpt_dft) {
                ckpt.update_dft(ctx_dft, seq_id, LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY);
            }
            int n_draft_max = (int) llama_n_ctx(ctx_tgt) - n_past - 2;
            n_draft_max = std::min(n_draft_max, params.n_predict - n_predict - 1);
            n_draft_max = std::max(n_draft_max, 0);
            common_speculative_get_draft_params(spec, seq_id) = {
                /* .drafting = */ true,
                /* .n_max    = */ n_draft_max,
                /* .n_past   = */ n_past,
                /* .id_last  = */ id_last,
                /* .prompt   = */ &prompt_tgt,
                /* .result   = */ &draft,
            };
            common_speculative_draft(spec);
            if (!draft.empty() && use_ckpt_tgt) {
                ckpt.update_tgt(ctx_tgt, seq_id, LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY);
            }
            if (ctx_dft) {
                if (use_ckpt_dft) {
                    ckpt.load_dft(ctx_dft, seq_id, LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY);
                }
                llama_memory_seq_rm(llama_get_memory(ctx_dft), seq_id, ckpt.pos_max + 1, -1);
            }
        } else {
            replay = true; // re-evaluating the previous round's sampled tokens after a restore
        }

        const int         n_past_round  = n_past;
        const llama_token id_last_round = id_last;
        common_batch_clear(batch_tgt);
        common_batch_add(batch_tgt, id_last, n_past++, { seq_id }, true);
        for (size_t i = 0; i < draft.size(); ++i) {
            common_batch_add(batch_tgt, draft[i], n_past + i, { seq_id }, true);
        }
        if (llama_decode(ctx_tgt, batch_tgt) != 0) {
            std::fprintf(stderr, "spec-reference: target decode failed\n");
            rc = 1;
            break;
        }
        if (!common_speculative_process(spec, batch_tgt)) {
            std::fprintf(stderr, "spec-reference: failed to process the speculative batch\n");
            rc = 1;
            break;
        }

        common_sampler_ptr smpl_save;
        if (use_ckpt_tgt) {
            smpl_save.reset(common_sampler_clone(smpl.get()));
        }
        const llama_tokens proposed = draft;
        auto ids = common_sampler_sample_and_accept_n(smpl.get(), ctx_tgt, draft);

        if (use_ckpt_tgt && ids.size() - 1 < proposed.size()) {
            std::printf("{\"type\":\"round\",\"round\":%d,\"n_past\":%d,\"id_last\":%d,\"proposed\":%s,\"accepted\":%d,"
                        "\"sampled\":%s,\"emitted\":[],\"restored\":true,\"replay\":%s}\n",
                    round++, n_past_round, id_last_round, json_ids(proposed).c_str(), (int) ids.size() - 1,
                    json_ids(ids).c_str(), replay ? "true" : "false");
            draft = std::move(ids);
            ckpt.load_tgt(ctx_tgt, seq_id, LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY);
            llama_memory_seq_rm(llama_get_memory(ctx_tgt), seq_id, ckpt.pos_max + 1, -1);
            if (ctx_dft) {
                ckpt.load_dft(ctx_dft, seq_id, LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY);
                llama_memory_seq_rm(llama_get_memory(ctx_dft), seq_id, ckpt.pos_max + 1, -1);
            }
            prompt_tgt.resize(ckpt.n_tokens);
            smpl = std::move(smpl_save);
            n_past = (int) prompt_tgt.size();
            continue;
        }

        common_speculative_accept(spec, seq_id, ids.size() - 1);
        n_past    += ids.size() - 1;
        n_drafted += proposed.size();
        n_accept  += ids.size() - 1;

        std::vector<llama_token> emitted;
        for (size_t i = 0; i < ids.size() && n_predict < params.n_predict; ++i) {
            prompt_tgt.push_back(id_last);
            id_last = ids[i];
            emitted.push_back(id_last);
            ++n_predict;
            if (llama_vocab_is_eog(vocab, id_last)) {
                has_eos = true;
                break;
            }
        }
        emitted_all.insert(emitted_all.end(), emitted.begin(), emitted.end());
        std::printf("{\"type\":\"round\",\"round\":%d,\"n_past\":%d,\"id_last\":%d,\"proposed\":%s,\"accepted\":%d,"
                    "\"sampled\":%s,\"emitted\":%s,\"restored\":false,\"replay\":%s}\n",
                round++, n_past_round, id_last_round, json_ids(proposed).c_str(),
                (int) ids.size() - 1, json_ids(ids).c_str(), json_ids(emitted).c_str(), replay ? "true" : "false");
        std::fflush(stdout);
        draft.clear();

        llama_memory_seq_rm(llama_get_memory(ctx_tgt), seq_id, n_past, -1);
        if (ctx_dft) {
            llama_memory_seq_rm(llama_get_memory(ctx_dft), seq_id, n_past, -1);
        }
        if (n_predict >= params.n_predict || has_eos) {
            break;
        }
    }

    std::printf("{\"type\":\"summary\",\"rounds\":%d,\"drafted\":%d,\"accepted\":%d,\"tokens\":%s,\"eos\":%s}\n",
            round, n_drafted, n_accept, json_ids(emitted_all).c_str(), has_eos ? "true" : "false");
    std::fflush(stdout);

    llama_batch_free(batch_tgt);
    common_speculative_free(spec);
    llama_backend_free();
    return rc;
}
