// A request's chat prompt with tools, and the tool calls in a reply, as llama-server makes and
// reads them: the model's template (llama.cpp's ChatML fallback when it has none) applied by
// common_chat_templates_apply, which also gives the grammar that forces a well-formed call
// (lazy: switched on by a trigger once the model starts a call) and the parser of the
// model's call syntax; common_chat_parse reads a reply with it. JSON crosses in both
// directions; the engine host checks it against the contract.
#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "chat.h"
#include "common.h"
#include "json.h"
#include "model.h"

namespace power {

namespace {

// how common_sampler_init turns the template's triggers into the lazy grammar's patterns and tokens
void add_triggers(const std::vector<common_grammar_trigger> & triggers, common_json & out) {
    common_json patterns = common_json::array();
    common_json tokens   = common_json::array();
    for (const auto & t : triggers) {
        switch (t.type) {
        case COMMON_GRAMMAR_TRIGGER_TYPE_WORD:
            patterns.push_back(regex_escape(t.value));
            break;
        case COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN:
            patterns.push_back(t.value);
            break;
        case COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL: {
            const std::string & p = t.value;
            patterns.push_back(p.empty() ? std::string("^$") : (p.front() != '^' ? "^" : "") + p + (p.back() != '$' ? "$" : ""));
            break;
        }
        case COMMON_GRAMMAR_TRIGGER_TYPE_TOKEN:
            tokens.push_back(static_cast<int>(t.token));
            break;
        }
    }
    out["triggerPatterns"] = patterns;
    out["triggerTokens"]   = tokens;
}

// the generation prompt's tokens as common_sampler_init feeds them to a tool-call grammar that is
// not lazy (the grammar starts where the template's prompt ends); a leading space token the
// tokenizer adds before a special token is left out, as there
common_json prefill_tokens(const llama_vocab * vocab, const std::string & generation_prompt) {
    common_json out = common_json::array();
    if (generation_prompt.empty()) {
        return out;
    }
    const std::vector<llama_token> tokens = common_tokenize(vocab, generation_prompt, false, true);
    for (size_t i = 0; i < tokens.size(); i++) {
        const std::string piece = common_token_to_piece(vocab, tokens[i], true);
        if (i == 0 && !piece.empty() && std::isspace(static_cast<unsigned char>(piece[0])) &&
            !std::isspace(static_cast<unsigned char>(generation_prompt[0]))) {
            continue;
        }
        out.push_back(static_cast<int>(tokens[i]));
    }
    return out;
}

std::string string_arg(const Napi::CallbackInfo & info, size_t i, const char * usage) {
    if (info.Length() <= i || !info[i].IsString()) {
        throw Napi::TypeError::New(info.Env(), usage);
    }
    return info[i].As<Napi::String>().Utf8Value();
}

common_json json_arg(const Napi::CallbackInfo & info, size_t i, const char * usage) {
    try {
        return common_json::parse(string_arg(info, i, usage));
    } catch (const std::exception & e) {
        throw Napi::TypeError::New(info.Env(), std::string(usage) + ": " + e.what());
    }
}

// a list of strings in an options object (absent: none)
std::vector<std::string> strings(const common_json & o, const char * key) {
    std::vector<std::string> out;
    if (o.contains(key)) {
        const common_json & list = o.at(key);
        for (size_t i = 0; i < list.size(); i++) {
            out.push_back(list.at(i).get<std::string>());
        }
    }
    return out;
}

// llama-server's reasoning_format (absent: auto); the parser applyChat builds extracts the
// reasoning unless it is none
common_reasoning_format reasoning_format(const common_json & o) {
    const std::string name = o.value("reasoningFormat", std::string("auto"));
    if (name != "none" && name != "deepseek" && name != "auto") {
        throw std::invalid_argument("reasoningFormat must be 'none', 'deepseek' or 'auto' (got '" + name + "')");
    }
    return common_reasoning_format_from_name(name);
}

} // namespace

// applyChat(requestJson) -> JSON text. requestJson: {messages, tools, toolChoice, parallelToolCalls,
// enableThinking, chatTemplateKwargs, reasoningFormat, chatTemplate} in OpenAI's and
// llama-server's forms; chatTemplate (absent: the model's own) stands in for the model's template
// as llama-server's --chat-template-file does. The answer: the prompt and what sampling and
// parsing the reply need.
Napi::Value Model::apply_chat(const Napi::CallbackInfo & info) {
    Napi::Env env             = info.Env();
    const llama_model & model = live_model(env);
    const llama_vocab * vocab = llama_model_get_vocab(&model);
    const common_json request = json_arg(info, 0, "applyChat(requestJson): requestJson must be JSON text");
    common_chat_templates_ptr t;
    try {
        t = common_chat_templates_init(&model, request.value("chatTemplate", std::string()));
    } catch (const std::exception & e) {
        throw Napi::Error::New(env, std::string("llama.cpp cannot read the chat template: ") + e.what());
    }

    common_chat_templates_inputs inputs;
    std::map<std::string, bool> caps = common_chat_templates_get_caps(t.get());
    try {
        inputs.messages         = common_chat_msgs_parse_oaicompat(request.at("messages"));
        inputs.tools            = common_chat_tools_parse_oaicompat(request.value("tools", common_json::array()));
        inputs.tool_choice      = common_chat_tool_choice_parse_oaicompat(request.value("toolChoice", std::string("auto")));
        inputs.reasoning_format = reasoning_format(request);
        // as llama-server: the switch first, then the template's variables, each JSON-dumped (the
        // template reads them back as JSON), an enable_thinking among them deciding the switch
        inputs.enable_thinking   = request.value("enableThinking", true);
        const common_json kwargs = request.value("chatTemplateKwargs", common_json::object());
        for (const auto & item : kwargs.items()) {
            inputs.chat_template_kwargs[item.key()] = item.value().dump();
        }
        const auto kwarg = inputs.chat_template_kwargs.find("enable_thinking");
        if (kwarg != inputs.chat_template_kwargs.end()) {
            if (kwarg->second == "true") {
                inputs.enable_thinking = true;
            } else if (kwarg->second == "false") {
                inputs.enable_thinking = false;
            } else {
                throw std::invalid_argument("chat_template_kwargs.enable_thinking must be a boolean (got " + kwarg->second + ")");
            }
        }
    } catch (const std::exception & e) {
        throw Napi::Error::New(env, std::string("the chat request does not read as llama-server reads it: ") + e.what());
    }
    inputs.use_jinja             = true;
    inputs.add_generation_prompt = true;
    // llama-server's default: what the template says it supports
    inputs.parallel_tool_calls =
        request.contains("parallelToolCalls") ? request.at("parallelToolCalls").get<bool>() : caps["supports_parallel_tool_calls"];
    common_chat_params params;
    bool supports_thinking = false;
    try {
        params            = common_chat_templates_apply(t.get(), inputs);
        supports_thinking = common_chat_templates_support_enable_thinking(t.get());
    } catch (const std::exception & e) {
        throw Napi::Error::New(env, std::string("llama.cpp cannot apply the model's chat template with these tools: ") + e.what());
    }

    common_json out         = common_json::object();
    out["prompt"]           = params.prompt;
    out["format"]           = static_cast<int>(params.format);
    out["formatName"]       = common_chat_format_name(params.format);
    out["grammar"]          = params.grammar;
    out["grammarLazy"]      = params.grammar_lazy;
    out["generationPrompt"] = params.generation_prompt;
    out["parser"]           = params.parser;
    out["preservedTokens"]  = params.preserved_tokens;
    out["additionalStops"]  = params.additional_stops;
    out["grammarPrefill"] =
        params.grammar.empty() || params.grammar_lazy ? common_json::array() : prefill_tokens(vocab, params.generation_prompt);
    out["templateToolCalls"] = caps["supports_tool_calls"];
    out["supportsThinking"]  = supports_thinking;
    out["thinkingStartTag"]  = params.thinking_start_tag;
    out["thinkingEndTags"]   = params.thinking_end_tags;
    add_triggers(params.grammar_triggers, out);
    return Napi::String::New(env, out.dump_safe());
}

// parseChat(optionsJson, tokens: Int32Array) -> JSON text. optionsJson: {format, parser,
// generationPrompt, preservedTokens, stops, partial, reasoningFormat}, the first three as applyChat
// gave them: its parser takes the reasoning apart where applyChat's reasoningFormat built it to.
// The reply's tokens are turned into text as llama-server does (special tokens only where the
// template preserves them), then parsed.
// The answer: {content, reasoningContent, toolCalls: [{name, arguments, id}]}.
Napi::Value Model::parse_chat(const Napi::CallbackInfo & info) {
    Napi::Env env             = info.Env();
    const llama_vocab * vocab = llama_model_get_vocab(&live_model(env));
    const char * usage        = "parseChat(optionsJson, tokens): optionsJson must be JSON text, tokens an Int32Array";
    const common_json o       = json_arg(info, 0, usage);
    if (info.Length() < 2 || !info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_int32_array) {
        throw Napi::TypeError::New(env, usage);
    }
    Napi::Int32Array tokens = info[1].As<Napi::Int32Array>();

    std::vector<llama_token> preserved;
    for (const std::string & piece : strings(o, "preservedTokens")) {
        const std::vector<llama_token> ids = common_tokenize(vocab, piece, false, true);
        if (ids.size() == 1) {
            preserved.push_back(ids[0]);
        }
    }
    std::string text;
    for (size_t i = 0; i < tokens.ElementLength(); i++) {
        const llama_token id = checked_token(env, Napi::Number::New(env, tokens[i]));
        const bool special   = std::find(preserved.begin(), preserved.end(), id) != preserved.end();
        text += common_token_to_piece(vocab, id, special);
    }

    // the reply ends before the earliest stop string in this text, as llama-server's stop search does
    size_t cut = std::string::npos;
    for (const std::string & stop : strings(o, "stops")) {
        const size_t at = stop.empty() ? std::string::npos : text.find(stop);
        cut             = std::min(cut, at);
    }
    if (cut != std::string::npos) {
        text.resize(cut);
    }

    // as llama-server builds it from the applyChat answer (common_chat_parser_params(chat_params))
    // and the request's reasoning_format; reasoning_in_content is for its legacy streaming only
    common_chat_parser_params syntax;
    syntax.format               = static_cast<common_chat_format>(o.value("format", 0));
    syntax.generation_prompt    = o.value("generationPrompt", std::string());
    syntax.parse_tool_calls     = true;
    syntax.reasoning_in_content = false;
    const std::string parser    = o.value("parser", std::string());
    common_chat_msg msg;
    try {
        syntax.reasoning_format = reasoning_format(o);
        if (!parser.empty()) {
            syntax.parser.load(parser);
        }
        msg = common_chat_parse(text, o.value("partial", false), syntax);
    } catch (const std::exception & e) {
        throw Napi::Error::New(env, std::string("the reply does not parse as the template's format: ") + e.what());
    }
    common_json calls = common_json::array();
    for (const auto & c : msg.tool_calls) {
        calls.push_back({{"name", c.name}, {"arguments", c.arguments}, {"id", c.id}});
    }
    common_json out         = common_json::object();
    out["content"]          = msg.content;
    out["reasoningContent"] = msg.reasoning_content;
    out["toolCalls"]        = calls;
    out["text"]             = text;
    return Napi::String::New(env, out.dump_safe());
}

} // namespace power
