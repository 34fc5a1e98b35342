// What the test and bench tools share: token lists as they take and print them, and a model on
// the CPU loaded with the llama.cpp libraries that sit next to the executable (the build puts
// them in one folder), with llama.cpp's log silenced so that stdout and stderr carry only the
// tool's own output.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "ggml-backend.h"
#include "llama-cpp.h"

namespace power_tool {

/** "1,2,3" as token ids. */
inline std::vector<llama_token> parse_tokens(const char * list) {
    std::vector<llama_token> tokens;
    std::stringstream ss(list);
    for (std::string item; std::getline(ss, item, ',');) {
        tokens.push_back(std::atoi(item.c_str()));
    }
    return tokens;
}

/** Token ids as "1,2,3". */
inline std::string token_list(const std::vector<llama_token> & tokens) {
    std::string out;
    for (llama_token t : tokens) {
        out += (out.empty() ? "" : ",") + std::to_string(t);
    }
    return out;
}

inline void quiet(ggml_log_level, const char *, void *) {}

/** The model at `path`, every layer on the CPU; null, after saying so on stderr, when it fails to load. */
inline llama_model_ptr load_cpu_model(const char * exe, const char * path) {
    const std::string self = exe;
    const auto slash       = self.find_last_of('/');
    const std::string dir  = slash == std::string::npos ? "." : self.substr(0, slash);
    llama_log_set(quiet, nullptr);
    llama_backend_init();
    ggml_backend_load_all_from_path(dir.c_str());
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers       = 0;
    llama_model_ptr model(llama_model_load_from_file(path, mp));
    if (!model) {
        std::fprintf(stderr, "load failed\n");
    }
    return model;
}

} // namespace power_tool
