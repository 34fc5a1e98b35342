#include "cpu_threads.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "ggml-backend.h"

#if defined(__linux__)
#include <sched.h>
#endif
#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <vector>
#endif

namespace power {
namespace {

// logical CPUs this process may run on (its affinity mask on Linux: taskset, cpusets)
int32_t logical_cpus() {
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) {
        return CPU_COUNT(&set);
    }
#endif
    return std::max(1, static_cast<int32_t>(std::thread::hardware_concurrency()));
}

// physical cores: distinct thread-sibling sets (Linux), processor cores (Windows); the logical
// count where the system does not say
int32_t physical_cores() {
#if defined(__linux__)
    std::set<std::string> cores;
    for (int cpu = 0;; cpu++) {
        std::ifstream siblings("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/thread_siblings");
        if (!siblings.is_open()) {
            break;
        }
        std::string line;
        if (std::getline(siblings, line)) {
            cores.insert(line);
        }
    }
    if (!cores.empty()) {
        return static_cast<int32_t>(cores.size());
    }
#elif defined(_WIN32)
    DWORD size = 0;
    GetLogicalProcessorInformationEx(RelationProcessorCore, nullptr, &size);
    std::vector<char> buf(size);
    if (size > 0 && GetLogicalProcessorInformationEx(RelationProcessorCore,
                                                     reinterpret_cast<PSYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX>(buf.data()), &size)) {
        int32_t n = 0;
        for (DWORD off = 0; off < size;) {
            auto * info = reinterpret_cast<PSYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX>(buf.data() + off);
            n++;
            off += info->Size;
        }
        if (n > 0) {
            return n;
        }
    }
#endif
    return logical_cpus();
}

using pool_new_fn  = ggml_threadpool * (*)(ggml_threadpool_params *);
using pool_free_fn = void (*)(ggml_threadpool *);

// the CPU backend is loaded dynamically (ggml_backend_load_all_from_path): its threadpool
// functions are reached through the registry, as llama.cpp's own tools do
void * cpu_proc(const char * name) {
    ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    ggml_backend_reg_t reg = cpu ? ggml_backend_dev_backend_reg(cpu) : nullptr;
    return reg ? ggml_backend_reg_get_proc_address(reg, name) : nullptr;
}

} // namespace

int32_t default_thread_count() {
    const int32_t logical = logical_cpus();
    const int32_t threads = std::min(physical_cores(), logical);
    // a CPU left for the app only where that costs little: with SMT the spare logical CPUs are
    // that room already; without it, one core of four or more. On 2 cores a second thread is
    // worth ~1.6x in decode on an idle machine (bench/RESULTS-cpu.md), so both are used
    if (threads >= 4 && threads == logical) {
        return threads - 1;
    }
    return std::max(1, threads);
}

void threadpool_deleter::operator()(ggml_threadpool * pool) const {
    static const auto pool_free = reinterpret_cast<pool_free_fn>(cpu_proc("ggml_threadpool_free"));
    if (pool && pool_free) {
        pool_free(pool);
    }
}

threadpool_ptr make_threadpool(int32_t n_threads, uint32_t poll) {
    static const auto pool_new  = reinterpret_cast<pool_new_fn>(cpu_proc("ggml_threadpool_new"));
    static const auto pool_free = reinterpret_cast<pool_free_fn>(cpu_proc("ggml_threadpool_free"));
    if (!pool_new || !pool_free) {
        return nullptr;
    }
    ggml_threadpool_params tpp = ggml_threadpool_params_default(n_threads);
    tpp.poll                   = std::min<uint32_t>(poll, 100);
    return threadpool_ptr(pool_new(&tpp));
}

} // namespace power
