#pragma once
// Asks the system loader whether a shared library loads, and why not. ggml's backend loader
// drops that reason in release builds (a CUDA backend that cannot load simply yields no
// device), so the addon repeats the attempt itself to tell the user what is missing.

#include <string>

namespace power {

// loads `path_or_name` (a file path, or a bare name searched the way the system loader
// searches: LD_LIBRARY_PATH, ldconfig cache / PATH on Windows) and unloads it again;
// returns "" when it loads, else the loader's message (dlerror / FormatMessage)
std::string try_load_library(const std::string & path_or_name);

} // namespace power
