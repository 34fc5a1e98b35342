#include "dynlib.h"

#include <memory>

#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace power {
namespace {

#ifdef _WIN32

struct library_closer {
    void operator()(HMODULE h) const { FreeLibrary(h); }
};
using library_ptr = std::unique_ptr<std::remove_pointer_t<HMODULE>, library_closer>;

std::wstring to_wide(const std::string & s) {
    int n = MultiByteToWideChar(CP_UTF8, 0, s.c_str(), -1, nullptr, 0);
    std::wstring out(n > 0 ? n - 1 : 0, L'\0');
    if (n > 1) {
        MultiByteToWideChar(CP_UTF8, 0, s.c_str(), -1, out.data(), n);
    }
    return out;
}

std::string last_error_text(DWORD code) {
    wchar_t * text = nullptr;
    DWORD n = FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, code, 0,
                             reinterpret_cast<LPWSTR>(&text), 0, nullptr);
    std::string out = "error " + std::to_string(code);
    if (n > 0 && text) {
        int len = WideCharToMultiByte(CP_UTF8, 0, text, static_cast<int>(n), nullptr, 0, nullptr, nullptr);
        std::string utf8(len, '\0');
        WideCharToMultiByte(CP_UTF8, 0, text, static_cast<int>(n), utf8.data(), len, nullptr, nullptr);
        while (!utf8.empty() && (utf8.back() == '\n' || utf8.back() == '\r' || utf8.back() == ' ')) {
            utf8.pop_back();
        }
        out = utf8 + " (" + out + ")";
    }
    LocalFree(text);
    return out;
}

#else

struct library_closer {
    void operator()(void * h) const { dlclose(h); }
};
using library_ptr = std::unique_ptr<void, library_closer>;

#endif

} // namespace

std::string try_load_library(const std::string & path_or_name) {
#ifdef _WIN32
    // no "cannot load" dialog boxes: report the error instead, as ggml's loader does
    UINT old_mode = SetErrorMode(SEM_FAILCRITICALERRORS);
    library_ptr lib(LoadLibraryW(to_wide(path_or_name).c_str()));
    DWORD code = lib ? 0 : GetLastError();
    SetErrorMode(old_mode);
    return lib ? std::string() : last_error_text(code);
#else
    dlerror(); // clear a stale message
    library_ptr lib(dlopen(path_or_name.c_str(), RTLD_NOW | RTLD_LOCAL));
    if (lib) {
        return {};
    }
    const char * why = dlerror();
    return why ? why : "unknown loader error";
#endif
}

} // namespace power
