// llama.cpp's own chat template application, for the test suite: the prompt llama-server would
// build for a list of chat messages, and its tokens. Power renders templates with
// @huggingface/jinja; test/model/chat-prompt-matches-llama-server.test.ts compares its tokens with these.
//
//   power-chat-template <model.gguf> <messages.json | ->
//
// messages.json is an OpenAI-style list of messages ([{"role": "system", "content": "..."}, ...]),
// parsed as llama-server parses a request's `messages` (common_chat_msgs_parse_oaicompat), or a
// request body ({"messages": [...], "tools": [...], "tool_choice": "...", "parallel_tool_calls": ...})
// whose tools are read as llama-server reads them. The
// template is the model's (or llama.cpp's ChatML fallback when it has none), set up and applied as
// llama-server does: common_chat_templates_init(model, ""), then common_chat_templates_apply with
// use_jinja and add_generation_prompt; the prompt is tokenized as llama-server tokenizes it
// (add_special true, parse_special true). Prints one JSON object on one line:
//   {"prompt": "...", "tokens": [...], "pieces": ["..."], "explicit_template": bool, "template": "..."}
// `pieces` are the tokens' texts with special tokens rendered; `explicit_template` is false
// when the model has no template of its own (the fallback was used). Only the vocabulary is
// loaded (no tensors, no backend).

#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "chat.h"
#include "common.h"
#include "json.h"
#include "llama.h"

static void quiet(ggml_log_level, const char *, void *) {}

static std::string read_all(const std::string & path) {
    if (path == "-") {
        return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot read " + path);
    }
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

int main(int argc, char ** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s model.gguf messages.json|-\n", argv[0]);
        return 2;
    }
    llama_log_set(quiet, nullptr);
    llama_backend_init();

    llama_model_params mp = llama_model_default_params();
    mp.vocab_only         = true;
    llama_model * model   = llama_model_load_from_file(argv[1], mp);
    if (!model) {
        std::fprintf(stderr, "cannot load %s\n", argv[1]);
        return 1;
    }
    const llama_vocab * vocab = llama_model_get_vocab(model);

    int status = 0;
    try {
        const common_json body = common_json::parse(read_all(argv[2]));
        // a list of messages, or a request body with them and its tools
        const common_json messages = body.is_array() ? body : body.at("messages");

        // as llama-server: the model's template (no override, the model's BOS/EOS texts), ChatML when it has none
        common_chat_templates_ptr tmpls = common_chat_templates_init(model, "");
        common_chat_templates_inputs inputs;
        inputs.messages              = common_chat_msgs_parse_oaicompat(messages);
        inputs.use_jinja             = true;
        inputs.add_generation_prompt = true;
        if (!body.is_array()) {
            // as oaicompat_chat_params_parse reads them
            auto caps                  = common_chat_templates_get_caps(tmpls.get());
            inputs.tools               = common_chat_tools_parse_oaicompat(body.value("tools", common_json::array()));
            inputs.tool_choice         = common_chat_tool_choice_parse_oaicompat(body.value("tool_choice", std::string("auto")));
            inputs.parallel_tool_calls = body.value("parallel_tool_calls", caps["supports_parallel_tool_calls"]);
        }
        const common_chat_params params = common_chat_templates_apply(tmpls.get(), inputs);

        // as llama-server tokenizes a prompt (tokenize_input_prompts: add_special, parse_special)
        const std::vector<llama_token> tokens = common_tokenize(vocab, params.prompt, true, true);

        common_json out    = common_json::object();
        out["prompt"]      = params.prompt;
        common_json ids    = common_json::array();
        common_json pieces = common_json::array();
        for (llama_token t : tokens) {
            ids.push_back(static_cast<int>(t));
            pieces.push_back(common_token_to_piece(vocab, t, true));
        }
        out["tokens"]            = ids;
        out["pieces"]            = pieces;
        out["explicit_template"] = common_chat_templates_was_explicit(tmpls.get());
        out["template"]          = common_chat_templates_source(tmpls.get(), "");
        // a piece may be part of a UTF-8 character: dump_safe replaces what is not valid text
        std::printf("%s\n", out.dump_safe().c_str());
    } catch (const std::exception & e) {
        std::fprintf(stderr, "%s\n", e.what());
        status = 1;
    }
    llama_model_free(model);
    llama_backend_free();
    return status;
}
