#include "session.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "addon_data.h"
#include "background_job.h"
#include "generate.h"
#include "js_options.h"
#include "media.h"
#include "model.h"
#include "proposer_common_checks.h"
#include "round_stream.h"
#include "session_open.h"

namespace power {
namespace {

// the largest store of earlier replies a session may ask for (about 200 bytes a token)
constexpr int64_t suffix_store_tokens_max = int64_t(1) << 22;

session_params read_session_params(Napi::Object opts) {
    session_params p;
    double n_ctx   = number_option(opts, "contextSize", p.n_ctx);
    double n_batch = number_option(opts, "batchSize", p.n_batch);
    double threads = number_option(opts, "threads", p.n_threads);
    if (n_ctx < 16 || n_ctx > (1 << 24)) throw Napi::RangeError::New(opts.Env(), "contextSize must be in [16, 16777216]");
    if (n_batch < 1 || n_batch > 65536) throw Napi::RangeError::New(opts.Env(), "batchSize must be in [1, 65536]");
    if (threads < 0 || threads > 1024) throw Napi::RangeError::New(opts.Env(), "threads must be in [0, 1024]");
    p.n_ctx     = static_cast<uint32_t>(n_ctx);
    p.n_batch   = static_cast<uint32_t>(n_batch);
    p.n_threads = static_cast<int32_t>(threads);
    double poll = number_option(opts, "threadpoolPoll", p.poll);
    if (poll < 0 || poll > 100 || poll != std::floor(poll))
        throw Napi::RangeError::New(opts.Env(), "threadpoolPoll must be an integer in [0, 100]");
    p.poll   = static_cast<uint32_t>(poll);
    double k = number_option(opts, "k", 0);
    double s = number_option(opts, "s", k);
    if (k < 0 || k > session_k_max || k != std::floor(k))
        throw Napi::RangeError::New(opts.Env(), "k must be an integer in [0, " + std::to_string(session_k_max) + "]");
    if (s < 0 || s > k || s != std::floor(s)) throw Napi::RangeError::New(opts.Env(), "s must be an integer in [0, k]");
    p.k = static_cast<int32_t>(k);
    p.s = static_cast<int32_t>(s);
    if (std::optional<std::string> strategy = string_option(opts, "strategy")) {
        p.strategy = *strategy;
    }
    const double p_min = number_option(opts, "pMin", 0.0);
    if (p_min < 0 || p_min > 1) throw Napi::RangeError::New(opts.Env(), "pMin must be a number in [0, 1]");
    p.p_min      = static_cast<float>(p_min);
    p.adaptive_k = bool_option(opts, "adaptiveK", false);
    if (std::optional<std::string> fa = choice_option(opts, "flashAttn", {"on", "off", "auto"})) {
        p.flash_attn = *fa == "on"    ? LLAMA_FLASH_ATTN_TYPE_ENABLED
                       : *fa == "off" ? LLAMA_FLASH_ATTN_TYPE_DISABLED
                                      : LLAMA_FLASH_ATTN_TYPE_AUTO;
    }
    if (std::optional<std::string> path = choice_option(opts, "proposerSampling", {"cpu", "backend"})) {
        p.proposer_backend_sampling = *path == "backend";
    }
    p.fr_vocab = static_cast<int32_t>(integer_option(opts, "frVocab", 0, 0, INT32_MAX));
    p.suffix_store_tokens =
        static_cast<int32_t>(integer_option(opts, "suffixStoreTokens", p.suffix_store_tokens, 0, suffix_store_tokens_max));
    if (std::optional<std::string> file = string_option(opts, "suffixStoreFile")) {
        if (file->empty()) throw Napi::RangeError::New(opts.Env(), "suffixStoreFile must name a file");
        p.suffix_store_path = *file;
    }
    if (std::optional<std::string> projector = string_option(opts, "projector")) {
        if (projector->empty()) throw Napi::RangeError::New(opts.Env(), "projector must name a file");
        p.projector = *projector;
    }
    return p;
}

sampling_params read_sampling(Napi::Object opts, const llama_vocab * vocab) {
    sampling_params s;
    s.temperature       = static_cast<float>(number_option(opts, "temperature", s.temperature));
    s.seed              = static_cast<uint32_t>(number_option(opts, "seed", s.seed));
    s.top_k             = static_cast<int32_t>(number_option(opts, "topK", s.top_k));
    s.top_p             = static_cast<float>(number_option(opts, "topP", s.top_p));
    s.min_p             = static_cast<float>(number_option(opts, "minP", s.min_p));
    s.repeat_penalty    = static_cast<float>(number_option(opts, "repeatPenalty", s.repeat_penalty));
    s.repeat_last_n     = static_cast<int32_t>(number_option(opts, "repeatLastN", s.repeat_last_n));
    s.presence_penalty  = static_cast<float>(number_option(opts, "presencePenalty", s.presence_penalty));
    s.frequency_penalty = static_cast<float>(number_option(opts, "frequencyPenalty", s.frequency_penalty));
    if (std::optional<std::string> path = choice_option(opts, "path", {"cpu", "backend"})) {
        s.backend = *path == "backend";
    }
    std::string invalid = validate(s);
    if (!invalid.empty()) {
        throw Napi::RangeError::New(opts.Env(), invalid);
    }
    s.n_probs                          = static_cast<int32_t>(integer_option(opts, "logprobs", -1, 0, max_probs));
    std::optional<std::string> grammar = string_option(opts, "grammar");
    std::optional<std::string> schema  = string_option(opts, "jsonSchema");
    if (grammar && schema) {
        throw Napi::Error::New(opts.Env(), "give a grammar or a JSON schema, not both");
    }
    if (schema) {
        try {
            s.grammar = grammar_from_json_schema(*schema);
        } catch (const std::exception & e) {
            throw Napi::Error::New(opts.Env(), e.what());
        }
    } else if (grammar) {
        s.grammar = *grammar;
    }
    const int32_t n_vocab  = llama_vocab_n_tokens(vocab);
    const auto read_tokens = [&](const Napi::Array & array, const char * key) {
        std::vector<llama_token> out;
        for (uint32_t i = 0; i < array.Length(); i++) {
            Napi::Value v = array.Get(i);
            if (!v.IsNumber() || v.As<Napi::Number>().Int32Value() < 0 || v.As<Napi::Number>().Int32Value() >= n_vocab) {
                throw Napi::RangeError::New(opts.Env(), std::string(key) + " holds a token that is not in the vocabulary");
            }
            out.push_back(v.As<Napi::Number>().Int32Value());
        }
        return out;
    };
    if (opts.Has("grammarLazy") && !opts.Get("grammarLazy").IsUndefined() && !opts.Get("grammarLazy").IsNull()) {
        if (!opts.Get("grammarLazy").IsObject()) {
            throw Napi::TypeError::New(opts.Env(), "grammarLazy must be an object {patterns, tokens}");
        }
        Napi::Object lazy = opts.Get("grammarLazy").As<Napi::Object>();
        s.grammar_lazy    = true;
        if (std::optional<Napi::Array> patterns = array_option(lazy, "patterns")) {
            s.grammar_trigger_patterns = string_list(*patterns, "grammarLazy.patterns");
        }
        if (std::optional<Napi::Array> tokens = array_option(lazy, "tokens")) {
            s.grammar_trigger_tokens = read_tokens(*tokens, "grammarLazy.tokens");
        }
    }
    if (std::optional<Napi::Array> prefill = array_option(opts, "grammarPrefill")) {
        s.grammar_prefill = read_tokens(*prefill, "grammarPrefill");
    }
    if ((s.grammar_lazy || !s.grammar_prefill.empty()) && s.grammar.empty()) {
        throw Napi::Error::New(opts.Env(), "grammarLazy and grammarPrefill go with a grammar");
    }
    if (!s.grammar.empty()) {
        const std::string problem = grammar_problem(vocab, s.grammar);
        if (!problem.empty()) {
            throw Napi::Error::New(opts.Env(), problem);
        }
    }
    s.reasoning_budget = reasoning_budget_option(opts, "reasoningBudget", vocab);
    invalid            = validate(s);
    if (!invalid.empty()) {
        throw Napi::RangeError::New(opts.Env(), invalid);
    }
    return s;
}

template <typename T> typename Napi::TypedArrayOf<T> typed_copy(Napi::Env env, const std::vector<T> & v) {
    auto out = Napi::TypedArrayOf<T>::New(env, v.size());
    std::copy(v.begin(), v.end(), out.Data());
    return out;
}

// a batch of rounds as it crosses to JS: the flat layout itself, in typed arrays (the engine host
// forwards it unchanged; app/engine/protocol.ts (expandRoundBatch) expands it into round records)
Napi::Object batch_to_js(Napi::Env env, const round_batch & b) {
    Napi::Object out = Napi::Object::New(env);
    out.Set("rounds", static_cast<double>(b.rounds()));
    out.Set("numbers", typed_copy(env, b.numbers));
    out.Set("ids", typed_copy(env, b.ids));
    out.Set("origins", typed_copy(env, b.origins));
    out.Set("bytes", typed_copy(env, b.bytes));
    out.Set("pieceEnds", typed_copy(env, b.piece_ends));
    if (!b.logprobs.empty()) {
        out.Set("logprobs", typed_copy(env, b.logprobs));
        out.Set("topIds", typed_copy(env, b.top_ids));
        out.Set("topLogprobs", typed_copy(env, b.top_logprobs));
        out.Set("topBytes", typed_copy(env, b.top_bytes));
        out.Set("topPieceEnds", typed_copy(env, b.top_piece_ends));
    }
    return out;
}

Napi::Object result_to_js(Napi::Env env, const generate_result & r) {
    Napi::Object out = Napi::Object::New(env);
    out.Set("stopReason", r.stop_reason);
    out.Set("replays", r.replays);
    out.Set("clampedTo", r.clamp >= 0 ? Napi::Value(Napi::Number::New(env, r.clamp)) : env.Null());
    out.Set("promptTokens", r.prompt_tokens);
    out.Set("reusedTokens", r.reused_tokens);
    out.Set("prefillUs", static_cast<double>(r.prefill_us));
    out.Set("totalUs", static_cast<double>(r.total_us));
    out.Set("generated", r.generated);
    out.Set("grammarCut", r.grammar_cut);
    if (r.images_encoded >= 0) out.Set("imagesEncoded", r.images_encoded);
    if (r.reasoning_forced >= 0) out.Set("reasoningForced", r.reasoning_forced);
    return out;
}

// runs on the JS thread once a job on the session is over: frees the context if a dispose
// was waiting for it
void finish_job(session_core & core) {
    core.busy = false;
    if (core.disposing) {
        core.prop.reset(); // before the target context: a proposer may read it
        core.projector.reset();
        core.ctx.reset();
        core.batch.reset();
        core.model.reset();
        for (auto & resolve : core.on_disposed) {
            resolve();
        }
        core.on_disposed.clear();
    }
}

} // namespace

void Session::init(Napi::Env env, Napi::Object exports) {
    Napi::Function ctor       = DefineClass(env, "Session",
                                            {
                                                StaticMethod<&guarded_fn<&Session::create>>("create"),
                                                InstanceMethod<&Session::guarded<&Session::generate>>("generate"),
                                                InstanceMethod<&Session::guarded<&Session::cancel>>("cancel"),
                                                InstanceMethod<&Session::guarded<&Session::dispose>>("dispose"),
                                                InstanceMethod<&Session::guarded<&Session::info>>("info"),
                                                InstanceMethod<&Session::guarded<&Session::inject_failure>>("injectFailureForTest"),
                                                InstanceMethod<&Session::guarded<&Session::hold>>("holdForTest"),
                                                InstanceMethod<&Session::guarded<&Session::capture_row>>("captureRow"),
                                                InstanceMethod<&Session::guarded<&Session::captured_row>>("capturedRow"),
                                                InstanceMethod<&Session::guarded<&Session::perturb_row>>("perturbRowForTest"),
                                                InstanceMethod<&Session::guarded<&Session::memory_cells>>("memoryCells"),
                                                InstanceMethod<&Session::guarded<&Session::suffix_store>>("suffixStore"),
                                            });
    data_of(env).session_ctor = Napi::Persistent(ctor);
    exports.Set("Session", ctor);
}

Session::Session(const Napi::CallbackInfo & info) : Napi::ObjectWrap<Session>(info) {
    if (info.Length() != 1 || !info[0].IsExternal()) {
        throw Napi::TypeError::New(info.Env(), "use Session.create(model, options) to create a session");
    }
    core_ = *info[0].As<Napi::External<session_core_ref>>().Data();
}

session_core & Session::live_core(Napi::Env env) {
    if (!core_ || core_->disposing || !core_->ctx) {
        throw Napi::Error::New(env, "session is disposed");
    }
    return *core_;
}

session_core & Session::idle_core(Napi::Env env, const char * busy_message) {
    session_core & core = live_core(env);
    if (core.busy) {
        throw Napi::Error::New(env, busy_message);
    }
    return core;
}

// Session.create(model, { contextSize?, batchSize?, threads?, flashAttn? }) -> Promise<Session>
Napi::Value Session::create(const Napi::CallbackInfo & info) {
    Napi::Env env                = info.Env();
    auto core                    = std::make_shared<session_core>();
    core->model                  = Model::unwrap(env, info.Length() > 0 ? info[0] : env.Undefined());
    Napi::Object opts            = info.Length() > 1 && info[1].IsObject() ? info[1].As<Napi::Object>() : Napi::Object::New(env);
    core->params                 = read_session_params(opts);
    const std::string & strategy = core->params.strategy;
    model_ref draft;
    // llama.cpp's n-gram families take none: one given is refused (check_session) rather than
    // ignored; `mtp` takes one for a Gemma 4 assistant or an MTP sidecar (none: the target's NextN layers)
    const bool draft_given                 = opts.Has("draft") && !opts.Get("draft").IsUndefined();
    const std::vector<std::string> members = strategy_members(strategy);
    // the strategies that take the option: the drafting ones, and llama.cpp's n-gram families, which refuse one
    const bool takes_draft = std::any_of(members.begin(), members.end(), [](const std::string & m) {
        return m == "draft-model" || m == "mtp" || common_type_of(m) != COMMON_SPECULATIVE_TYPE_COUNT;
    });
    if (draft_given && takes_draft) {
        draft = Model::unwrap(env, opts.Get("draft"));
    }
    // the NextN layers mtp drafts with: the sidecar's when it takes the draft, else the target's
    const bool mtp_draft      = draft && member_takes_draft(strategy, "mtp");
    const bool mtp_loaded     = strategy_has_member(strategy, "mtp") && Model::mtp_loaded(env, mtp_draft ? opts.Get("draft") : info[0]);
    const std::string problem = check_session(*core, draft, draft_given, mtp_loaded);
    if (!problem.empty()) {
        throw Napi::Error::New(env, problem);
    }
    return background_job::start(env, "power.Session.create", [core, draft](background_job & job) {
        std::string failed = open_session(*core, draft);
        if (failed.empty() && !core->params.projector.empty()) {
            failed = open_projector(*core);
        }
        if (!failed.empty()) {
            job.reject(failed);
            return;
        }
        job.resolve([core](Napi::Env env) -> Napi::Value {
            session_core_ref holder = core;
            return data_of(env).session_ctor.New({Napi::External<session_core_ref>::New(env, &holder)});
        });
    });
}

// generate(prompt, options, onRounds(batch)) -> Promise<result>; batches: batch_to_js. The prompt:
// an Int32Array of tokens, or { text, images } for a session with a projector (media.h): the
// text with one media marker per image, the images' encoded bytes as Uint8Arrays
Napi::Value Session::generate(const Napi::CallbackInfo & info) {
    Napi::Env env       = info.Env();
    session_core & core = idle_core(env);
    const bool tokens = info.Length() > 0 && info[0].IsTypedArray() && info[0].As<Napi::TypedArray>().TypedArrayType() == napi_int32_array;
    const bool media  = info.Length() > 0 && !tokens && info[0].IsObject() && !info[0].IsTypedArray() && !info[0].IsArray();
    if (info.Length() < 3 || !(tokens || media) || !info[1].IsObject() || !info[2].IsFunction()) {
        throw Napi::TypeError::New(env, "generate(prompt: Int32Array | {text, images}, options: object, onRound: function)");
    }
    Napi::Object opts     = info[1].As<Napi::Object>();
    const int32_t n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(core.model.get()));

    auto req       = std::make_shared<generate_request>();
    auto media_req = std::make_shared<media_prompt>();
    if (tokens) {
        Napi::Int32Array prompt = info[0].As<Napi::Int32Array>();
        req->prompt.assign(prompt.Data(), prompt.Data() + prompt.ElementLength());
        for (llama_token t : req->prompt) {
            if (t < 0 || t >= n_vocab) {
                throw Napi::RangeError::New(env, "prompt token " + std::to_string(t) + " is outside the vocabulary (size " +
                                                     std::to_string(n_vocab) + ")");
            }
        }
    } else {
        Napi::Object prompt               = info[0].As<Napi::Object>();
        std::optional<std::string> text   = string_option(prompt, "text");
        std::optional<Napi::Array> images = array_option(prompt, "images");
        if (!text || !images) {
            throw Napi::TypeError::New(env, "a prompt with images is {text: string, images: Uint8Array[]}");
        }
        media_req->text        = *text;
        media_req->add_special = bool_option(prompt, "addSpecial", true);
        for (uint32_t i = 0; i < images->Length(); i++) {
            Napi::Value v = images->Get(i);
            if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
                throw Napi::TypeError::New(env, "images must hold Uint8Arrays (entry " + std::to_string(i) + " is not one)");
            }
            Napi::Uint8Array bytes = v.As<Napi::Uint8Array>();
            media_req->files.push_back(std::make_shared<const std::vector<uint8_t>>(bytes.Data(), bytes.Data() + bytes.ElementLength()));
        }
        const std::string problem = media_problem(core, *media_req);
        if (!problem.empty()) {
            throw Napi::Error::New(env, problem);
        }
    }
    double max_tokens = number_option(opts, "maxTokens", req->max_tokens);
    if (max_tokens < 1 || max_tokens > (1 << 24) || max_tokens != std::floor(max_tokens)) {
        throw Napi::RangeError::New(env, "maxTokens must be an integer in [1, 16777216]");
    }
    req->max_tokens = static_cast<int32_t>(max_tokens);
    req->sampling   = read_sampling(opts, llama_model_get_vocab(core.model.get()));

    auto on_round = std::make_shared<Napi::FunctionReference>(Napi::Persistent(info[2].As<Napi::Function>()));
    core.busy     = true;
    core.cancel.store(false);
    session_core_ref ref = core_;
    return background_job::start(env, "power.Session.generate", [ref, req, media, media_req, on_round](background_job & job) {
        // the callback reference is dropped on the JS thread, after the last round
        auto release = [ref, on_round](Napi::Env) {
            on_round->Reset();
            finish_job(*ref);
        };
        // rounds reach JS in coalesced batches (round_stream.h); spare batches come back here
        auto spare = std::make_shared<round_batch_pool>();
        round_stream stream(spare, [&job, on_round, spare](std::shared_ptr<round_batch> batch) {
            job.post([on_round, spare, batch](Napi::Env env) {
                Napi::HandleScope scope(env);
                if (!on_round->IsEmpty()) {
                    on_round->Call({batch_to_js(env, *batch)});
                }
                spare->give(batch);
            });
        });
        try {
            ref->cut_problem.clear();
            // a prompt with images: evaluated up to its last token here, which run_generation's
            // prefill then evaluates as it would a text prompt's
            req->t0_us = llama_time_us();
            media_outcome evaluated;
            if (media) {
                evaluated = evaluate_media_prompt(*ref, *media_req, req->prompt);
            }
            if (!evaluated.completed) {
                job.post(release);
                generate_result cancelled;
                cancelled.stop_reason    = "cancelled";
                cancelled.images_encoded = evaluated.images_encoded;
                job.resolve([cancelled](Napi::Env env) -> Napi::Value { return result_to_js(env, cancelled); });
                return;
            }
            generate_result result = run_generation(*ref, *req, stream);
            if (media) {
                // run_generation found all but the last position evaluated: what was kept is what
                // the last request left
                result.reused_tokens  = static_cast<int32_t>(evaluated.reused);
                result.images_encoded = evaluated.images_encoded;
            }
            stream.flush();
            job.post(release);
            job.resolve([result](Napi::Env env) -> Napi::Value { return result_to_js(env, result); });
        } catch (const std::exception & e) {
            stream.flush(); // the rounds committed before the failure
            job.post(release);
            // a failed sliding-window cut leaves the sequence empty and its reason behind
            job.reject(ref->cut_problem.empty() ? std::string(e.what()) : std::string(e.what()) + ": " + ref->cut_problem);
        }
    });
}

// cancel(): asks the running request to stop at the next safe point; it resolves with
// stopReason "cancelled" and the session keeps its last committed state
Napi::Value Session::cancel(const Napi::CallbackInfo & info) {
    if (core_ && core_->busy) {
        core_->cancel.store(true);
    }
    return info.Env().Undefined();
}

// dispose() -> Promise<void>: cancels any running request, waits for it, frees the context
Napi::Value Session::dispose(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    auto deferred = Napi::Promise::Deferred::New(env);
    if (!core_ || core_->disposing) {
        deferred.Resolve(env.Undefined());
        return deferred.Promise();
    }
    core_->disposing = true;
    if (core_->busy) {
        core_->cancel.store(true);
        core_->on_disposed.push_back([deferred, env] { deferred.Resolve(env.Undefined()); });
    } else {
        finish_job(*core_);
        deferred.Resolve(env.Undefined());
    }
    return deferred.Promise();
}

Napi::Value Session::info(const Napi::CallbackInfo & info) {
    Napi::Env env       = info.Env();
    session_core & core = live_core(env);
    Napi::Object out    = Napi::Object::New(env);
    out.Set("contextSize", llama_n_ctx(core.ctx.get()));
    out.Set("batchSize", llama_n_batch(core.ctx.get()));
    out.Set("threads", llama_n_threads(core.ctx.get()));
    out.Set("threadpool", core.pool != nullptr);
    out.Set("committedTokens", static_cast<double>(core.committed.size()));
    out.Set("strategy", core.prop ? core.prop->name() : "none");
    out.Set("k", core.spec.k);
    out.Set("s", core.spec.recurrent ? Napi::Value(Napi::Number::New(env, core.spec.s)) : env.Null());
    out.Set("recurrent", core.spec.recurrent);
    out.Set("flashAttn", core.flash_attn_used);
    return out;
}

// suffixStore(clear): the tokens the model's store of earlier replies holds (`suffix`; null: the
// model has none) and why its file is not in use (null: it is, or there is none), emptied first
// (its file too) when `clear` is true. The store is the model's: every session on it shares it.
Napi::Value Session::suffix_store(const Napi::CallbackInfo & info) {
    Napi::Env env                                    = info.Env();
    session_core & core                              = live_core(env);
    const std::shared_ptr<power::suffix_store> store = find_suffix_store(core.model.get());
    if (!store) {
        return env.Null();
    }
    if (info.Length() > 0 && info[0].IsBoolean() && info[0].As<Napi::Boolean>().Value()) {
        suffix_store_clear(*store);
    }
    Napi::Object out          = Napi::Object::New(env);
    const std::string problem = suffix_store_problem(*store);
    out.Set("tokens", static_cast<double>(suffix_store_tokens(*store)));
    out.Set("problem", problem.empty() ? env.Null() : Napi::String::New(env, problem));
    return out;
}

// injectFailureForTest(round): the verify decode of that round (1-based) of the next request
// fails as a fatal decode error would, after evaluating its rows. For tests only.
Napi::Value Session::inject_failure(const Napi::CallbackInfo & info) {
    Napi::Env env       = info.Env();
    session_core & core = live_core(env);
    core.fail_at_round  = info.Length() > 0 && info[0].IsNumber() ? info[0].As<Napi::Number>().Int32Value() : 0;
    return env.Undefined();
}

// holdForTest(round): the next request, once it has emitted that many rounds (1-based), holds
// until cancel() or dispose() instead of going on; 0 clears it. For tests only.
Napi::Value Session::hold(const Napi::CallbackInfo & info) {
    Napi::Env env         = info.Env();
    session_core & core   = live_core(env);
    core.hold_after_round = info.Length() > 0 && info[0].IsNumber() ? info[0].As<Napi::Number>().Int32Value() : 0;
    return env.Undefined();
}

} // namespace power
