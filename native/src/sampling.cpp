#include "sampling.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "json-schema-to-grammar.h"
#include "log_capture.h"
#include "reasoning-budget.h"

namespace power {

std::string validate(const sampling_params & p) {
    if (!std::isfinite(p.temperature) || p.temperature < 0) return "temperature must be >= 0";
    if (p.top_k < 0) return "top-k must be >= 0";
    if (!(p.top_p > 0 && p.top_p <= 1)) return "top-p must be in (0, 1]";
    if (!(p.min_p >= 0 && p.min_p <= 1)) return "min-p must be in [0, 1]";
    if (!std::isfinite(p.repeat_penalty) || p.repeat_penalty <= 0) return "repeat penalty must be > 0";
    if (p.repeat_last_n < 0) return "repeat-last-n must be >= 0";
    if (!std::isfinite(p.presence_penalty) || !std::isfinite(p.frequency_penalty)) {
        return "presence and frequency penalties must be finite";
    }
    const reasoning_budget_params & rb = p.reasoning_budget;
    if (rb.on()) {
        if (rb.tokens < 0) return "the reasoning budget must be >= 0 tokens";
        // the budget watches for the tags' tokens: a tag with none could never be seen
        if (rb.start.empty()) return "the reasoning budget's start tag '" + rb.start_text + "' does not tokenize on this vocabulary";
        if (rb.ends.empty()) return "the reasoning budget needs at least one end tag";
        for (size_t i = 0; i < rb.ends.size(); i++) {
            if (rb.ends[i].empty()) {
                const std::string & tag = i < rb.end_texts.size() ? rb.end_texts[i] : std::string();
                return "the reasoning budget's end tag '" + tag + "' does not tokenize on this vocabulary";
            }
        }
    }
    return {};
}

std::string grammar_from_json_schema(const std::string & schema_json) {
    common_json schema;
    try {
        schema = common_json::parse(schema_json);
    } catch (const std::exception & e) {
        throw std::invalid_argument(std::string("the JSON schema is not JSON: ") + e.what());
    }
    try {
        return json_schema_to_grammar(schema);
    } catch (const std::exception & e) {
        throw std::invalid_argument(std::string("llama.cpp cannot turn the JSON schema into a grammar: ") + e.what());
    }
}

std::string grammar_problem(const llama_vocab * vocab, const std::string & grammar) {
    const uint64_t mark = log_capture_mark();
    sampler_ptr parsed(llama_sampler_init_grammar(vocab, grammar.c_str(), "root"));
    if (parsed) {
        return {};
    }
    const std::string why = log_capture_problems_since(mark);
    return "llama.cpp's GBNF parser refused the grammar" + (why.empty() ? std::string() : ": " + why);
}

void row_logprobs(const float * logits, int32_t n_vocab, llama_token chosen, int32_t n_top, row_probs & out) {
    float max = -INFINITY;
    for (int32_t i = 0; i < n_vocab; i++) {
        max = std::max(max, logits[i]);
    }
    double sum = 0.0;
    for (int32_t i = 0; i < n_vocab; i++) {
        sum += std::exp(static_cast<double>(logits[i]) - max);
    }
    const double lse = max + std::log(sum);
    out.chosen       = static_cast<float>(logits[chosen] - lse);
    out.top.clear();
    const size_t limit = static_cast<size_t>(std::max(0, n_top));
    for (llama_token id = 0; id < n_vocab && limit > 0; id++) {
        const float l = logits[id];
        if (out.top.size() == limit && !(l > out.top.back().second)) {
            continue;
        }
        const auto at = std::upper_bound(out.top.begin(), out.top.end(), l,
                                         [](float v, const std::pair<llama_token, float> & d) { return v > d.second; });
        out.top.insert(at, {id, l});
        if (out.top.size() > limit) {
            out.top.pop_back();
        }
    }
    for (auto & entry : out.top) {
        entry.second = static_cast<float>(entry.second - lse);
    }
}

std::string backend_chain_problem(const sampling_params & p, int32_t rows_per_seq) {
    if (p.n_probs >= 0) {
        return "log-probabilities are read from rows of logits on the CPU only";
    }
    if (!p.grammar.empty()) {
        return "a grammar (or JSON schema) is applied on the CPU only";
    }
    // llama.cpp's reasoning-budget sampler has no backend implementation
    if (p.reasoning_budget.on()) {
        return "a reasoning budget is applied on the CPU only";
    }
    const bool penalties = p.repeat_last_n != 0 && (p.repeat_penalty != 1.0f || p.presence_penalty != 0.0f || p.frequency_penalty != 0.0f);
    // llama.cpp's penalties sampler keeps one token history per sequence: with several rows of a
    // sequence in one pass, row i would not see rows 0..i-1, so it refuses the backend there
    if (penalties && rows_per_seq > 1) {
        return "repeat, presence and frequency penalties run on the backend only without proposals (K = 0)";
    }
    return {};
}

backend_sampler_scope::backend_sampler_scope(llama_context * ctx, llama_sampler * chain, bool attach) : ctx_(ctx), attached_(false) {
    if (attach) {
        if (!llama_set_sampler(ctx_, 0, chain)) {
            throw std::runtime_error("llama.cpp could not attach the sampler chain to the backend");
        }
        attached_ = true;
    }
}

backend_sampler_scope::~backend_sampler_scope() {
    if (attached_) {
        llama_set_sampler(ctx_, 0, nullptr);
    }
}

target_sampler target_sampler::clone() const {
    target_sampler copy;
    copy.plain_greedy = plain_greedy;
    copy.grammar_lazy = grammar_lazy;
    copy.forced_ends  = forced_ends;
    copy.chain.reset(llama_sampler_clone(chain.get()));
    if (grammar) {
        copy.grammar.reset(llama_sampler_clone(grammar.get()));
    }
    if (budget) {
        copy.budget.reset(llama_sampler_clone(budget.get()));
    }
    return copy;
}

bool target_sampler::grammar_applies() const {
    if (!grammar) {
        return false;
    }
    if (!budget || !grammar_lazy) {
        return true;
    }
    const common_reasoning_budget_state state = common_reasoning_budget_get_state(budget.get());
    return state == REASONING_BUDGET_IDLE || state == REASONING_BUDGET_DONE;
}

// common_sampler_accept's order: whether the grammar takes the token is decided before the budget
// moves; a thinking block that ends hands its end sequence to the grammar it held off (the end
// may hold a trigger, as Qwen 3.5's <tool_call> does)
void target_sampler::accept(llama_token token) {
    const bool to_grammar = grammar_applies();
    if (budget) {
        const common_reasoning_budget_state before = common_reasoning_budget_get_state(budget.get());
        llama_sampler_accept(budget.get(), token);
        const bool done = common_reasoning_budget_get_state(budget.get()) == REASONING_BUDGET_DONE;
        if (done && before == REASONING_BUDGET_FORCING) {
            forced_ends++;
        }
        if (grammar && !to_grammar && done) {
            if (const llama_tokens * end = common_reasoning_budget_get_end_match(budget.get())) {
                for (llama_token t : *end) {
                    llama_sampler_accept(grammar.get(), t);
                }
            }
        }
    }
    if (grammar && to_grammar) {
        llama_sampler_accept(grammar.get(), token);
    }
    llama_sampler_accept(chain.get(), token);
}

namespace {

sampler_ptr make_chain(const sampling_params & p, const llama_vocab * vocab) {
    llama_sampler_chain_params cp = llama_sampler_chain_default_params();
    cp.no_perf                    = true;
    sampler_ptr chain(llama_sampler_chain_init(cp));
    bool penalties = p.repeat_penalty != 1.0f || p.presence_penalty != 0.0f || p.frequency_penalty != 0.0f;
    if (penalties && p.repeat_last_n != 0) {
        llama_sampler_chain_add(chain.get(), llama_sampler_init_penalties(llama_vocab_n_tokens(vocab), p.repeat_last_n, p.repeat_penalty,
                                                                          p.frequency_penalty, p.presence_penalty));
    }
    if (p.temperature <= 0.0f) {
        llama_sampler_chain_add(chain.get(), llama_sampler_init_greedy());
        return chain;
    }
    if (p.top_k > 0) llama_sampler_chain_add(chain.get(), llama_sampler_init_top_k(p.top_k));
    if (p.top_p < 1.0f) llama_sampler_chain_add(chain.get(), llama_sampler_init_top_p(p.top_p, 1));
    if (p.min_p > 0.0f) llama_sampler_chain_add(chain.get(), llama_sampler_init_min_p(p.min_p, 1));
    llama_sampler_chain_add(chain.get(), llama_sampler_init_temp(p.temperature));
    llama_sampler_chain_add(chain.get(), llama_sampler_init_dist(p.seed));
    return chain;
}

} // namespace

target_sampler make_sampler(const llama_vocab * vocab, const sampling_params & p) {
    target_sampler s;
    s.chain              = make_chain(p, vocab);
    const bool penalties = p.repeat_last_n != 0 && (p.repeat_penalty != 1.0f || p.presence_penalty != 0.0f || p.frequency_penalty != 0.0f);
    s.plain_greedy       = p.temperature <= 0.0f && !penalties;
    if (!p.grammar.empty()) {
        if (p.grammar_lazy) {
            std::vector<const char *> patterns;
            for (const std::string & pattern : p.grammar_trigger_patterns) {
                patterns.push_back(pattern.c_str());
            }
            s.grammar.reset(llama_sampler_init_grammar_lazy_patterns(vocab, p.grammar.c_str(), "root", patterns.data(), patterns.size(),
                                                                     p.grammar_trigger_tokens.data(), p.grammar_trigger_tokens.size()));
        } else {
            s.grammar.reset(llama_sampler_init_grammar(vocab, p.grammar.c_str(), "root"));
        }
        if (!s.grammar) {
            throw std::invalid_argument(grammar_problem(vocab, p.grammar));
        }
        for (llama_token t : p.grammar_prefill) {
            llama_sampler_accept(s.grammar.get(), t);
        }
        s.grammar_lazy = p.grammar_lazy;
    }
    const reasoning_budget_params & rb = p.reasoning_budget;
    if (rb.on()) {
        s.budget.reset(common_reasoning_budget_init(vocab, {rb.start}, rb.ends, rb.forced, rb.tokens));
        // the generation prompt's tokens: one that opens the thinking starts the count
        for (llama_token t : rb.prefill) {
            llama_sampler_accept(s.budget.get(), t);
        }
    }
    return s;
}

sampler_ptr make_greedy_chain() {
    llama_sampler_chain_params cp = llama_sampler_chain_default_params();
    cp.no_perf                    = true;
    sampler_ptr chain(llama_sampler_chain_init(cp));
    llama_sampler_chain_add(chain.get(), llama_sampler_init_greedy());
    return chain;
}

namespace {

// the row through the budget (or nothing), then `grammar` (or nothing), then the chain; the chain's
// pick (common_sampler_sample's order)
llama_token draw_from_row(llama_sampler * budget, llama_sampler * grammar, llama_sampler * chain, const float * logits, int32_t n_vocab,
                          std::vector<llama_token_data> & cur) {
    cur.resize(n_vocab);
    for (llama_token id = 0; id < n_vocab; id++) {
        cur[id] = llama_token_data{id, logits[id], 0.0f};
    }
    llama_token_data_array arr = {cur.data(), cur.size(), -1, false};
    if (budget) {
        llama_sampler_apply(budget, &arr);
    }
    if (grammar) {
        llama_sampler_apply(grammar, &arr);
    }
    llama_sampler_apply(chain, &arr);
    const llama_token token = arr.data[arr.selected].id;
    if (arr.data == cur.data()) {
        cur.resize(arr.size); // what the chain kept, for a caller that looks (row_capture)
    }
    return token;
}

bool grammar_allows(llama_sampler * grammar, llama_token token) {
    llama_token_data single    = {token, 1.0f, 0.0f};
    llama_token_data_array one = {&single, 1, -1, false};
    llama_sampler_apply(grammar, &one);
    return one.data[0].logit != -INFINITY;
}

// The row's best token the grammar allows, looked for among the row's 64 best (ties: the lower
// id first, as llama.cpp's greedy sampler breaks them); LLAMA_TOKEN_NULL when none of them is.
// Whenever it finds one, it is the token the grammar applied to the whole row and then argmax
// would give, at a fraction of the cost: the grammar checks 64 tokens, not the vocabulary.
llama_token best_allowed_near_top(llama_sampler * grammar, const float * logits, int32_t n_vocab, std::vector<llama_token_data> & top) {
    constexpr size_t limit = 64;
    top.clear();
    for (llama_token id = 0; id < n_vocab; id++) {
        const float l = logits[id];
        if (top.size() == limit && !(l > top.back().logit)) {
            continue;
        }
        const auto at = std::upper_bound(top.begin(), top.end(), l, [](float v, const llama_token_data & d) { return v > d.logit; });
        top.insert(at, llama_token_data{id, l, 0.0f});
        if (top.size() > limit) {
            top.pop_back();
        }
    }
    for (const llama_token_data & d : top) {
        if (d.logit != -INFINITY && grammar_allows(grammar, d.id)) {
            return d.id;
        }
    }
    return LLAMA_TOKEN_NULL;
}

} // namespace

size_t grammar_admitted_prefix(const target_sampler & sampler, const std::vector<llama_token> & proposals, const llama_vocab * vocab) {
    if (!sampler.grammar) {
        return proposals.size();
    }
    if (sampler.budget) {
        // the budget decides along the way whether the grammar checks a row: walk both
        target_sampler walk = sampler.clone();
        for (size_t i = 0; i < proposals.size(); i++) {
            if (walk.grammar_applies() && !grammar_allows(walk.grammar.get(), proposals[i])) {
                return i;
            }
            if (llama_vocab_is_eog(vocab, proposals[i])) {
                return i + 1;
            }
            walk.accept(proposals[i]);
        }
        return proposals.size();
    }
    sampler_ptr walk(llama_sampler_clone(sampler.grammar.get()));
    for (size_t i = 0; i < proposals.size(); i++) {
        if (!grammar_allows(walk.get(), proposals[i])) {
            return i;
        }
        if (llama_vocab_is_eog(vocab, proposals[i])) {
            return i + 1;
        }
        llama_sampler_accept(walk.get(), proposals[i]);
    }
    return proposals.size();
}

llama_token grammar_guided_pick(llama_sampler * walk, llama_token token, const float * logits, int32_t n_vocab,
                                std::vector<llama_token_data> & cur) {
    if (!walk) {
        return token;
    }
    if (token < 0 || token >= n_vocab || !grammar_allows(walk, token)) {
        // a draft the grammar's best is not near the top of is not worth a scan of the vocabulary
        token = logits ? best_allowed_near_top(walk, logits, n_vocab, cur) : LLAMA_TOKEN_NULL;
        if (token == LLAMA_TOKEN_NULL) {
            return token;
        }
    }
    llama_sampler_accept(walk, token);
    return token;
}

llama_token sample_row(target_sampler & sampler, const float * logits, int32_t n_vocab, std::vector<llama_token_data> & cur) {
    llama_sampler * budget = sampler.budget.get();
    llama_token token      = draw_from_row(budget, nullptr, sampler.chain.get(), logits, n_vocab, cur);
    // checking the one drawn token costs little; filtering the whole vocabulary (262,144 rows on
    // Gemma) is paid only when the grammar refuses it
    if (sampler.grammar_applies() && !grammar_allows(sampler.grammar.get(), token)) {
        // plain greedy: the best allowed token near the top is the whole filter's argmax (not
        // while the budget forces a token: the row is then that token alone)
        const bool forcing = budget && common_reasoning_budget_get_state(budget) == REASONING_BUDGET_FORCING;
        const llama_token near =
            sampler.plain_greedy && !forcing ? best_allowed_near_top(sampler.grammar.get(), logits, n_vocab, cur) : LLAMA_TOKEN_NULL;
        token = near != LLAMA_TOKEN_NULL ? near : draw_from_row(budget, sampler.grammar.get(), sampler.chain.get(), logits, n_vocab, cur);
        if (!grammar_allows(sampler.grammar.get(), token)) {
            // every token was refused (the grammar has no way on from here)
            throw std::runtime_error("the grammar allows no token after this point of the reply");
        }
    }
    sampler.accept(token);
    return token;
}

row_decision sample_through_first_mismatch(const llama_vocab * vocab, const std::function<llama_token(int32_t)> & draw,
                                           const std::vector<llama_token> & proposals, int32_t budget, std::vector<llama_token> & emitted,
                                           std::vector<const char *> & origins) {
    row_decision d;
    emitted.clear();
    origins.clear();
    const int32_t k = static_cast<int32_t>(proposals.size());
    for (int32_t i = 0; i <= k; i++) {
        const llama_token token = draw(i);
        if (llama_vocab_is_eog(vocab, token)) {
            d.eog = true;
            break;
        }
        const bool matches = i < k && token == proposals[i];
        emitted.push_back(token);
        origins.push_back(k == 0 ? "target" : matches ? "accepted" : i < k ? "correction" : "bonus");
        if (matches) {
            d.accepted++;
        }
        if (!matches || static_cast<int32_t>(emitted.size()) >= budget) {
            break;
        }
    }
    return d;
}

bool below_p_min(const float * logits, int32_t n_vocab, llama_token token, float p_min) {
    if (p_min <= 0.0f || !logits || token < 0 || token >= n_vocab) {
        return false;
    }
    float max = logits[0];
    for (int32_t i = 1; i < n_vocab; i++) {
        max = std::max(max, logits[i]);
    }
    double sum = 0.0;
    for (int32_t i = 0; i < n_vocab; i++) {
        sum += std::exp(static_cast<double>(logits[i] - max));
    }
    return std::exp(static_cast<double>(logits[token] - max)) / sum < p_min;
}

} // namespace power
