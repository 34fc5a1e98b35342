// Session::memoryCells: what the target's KV cache holds, read from llama.cpp's memory.
//
// The public C API tells only the positions of a sequence (llama_memory_seq_pos_min/_max; on
// an iSWA cache those are the sliding-window cache's). How many cells are in use it does not
// tell, so this reads the caches through the release's C++ classes (src/llama-kv-cache*.h,
// exported by the same libllama as the staging API of llama-ext.h): the base and the
// sliding-window cache of an iSWA memory (llama_kv_cache_iswa::get_base/get_swa), or the one
// cache of a plain attention memory, each with its size, its used cells (llama_kv_cells::
// get_used: every cell that holds any sequence) and sequence 0's positions. Other memories
// (recurrent, hybrid) report only the public positions.

#include <string>

#include "session.h"

#include "llama-kv-cache-iswa.h"
#include "llama-kv-cache.h"

namespace power {
namespace {

Napi::Object cache_cells(Napi::Env env, const llama_kv_cache & cache) {
    const llama_kv_cells & cells = cache.get_cells(0);
    Napi::Object out             = Napi::Object::New(env);
    out.Set("size", static_cast<double>(cache.get_size()));
    out.Set("used", static_cast<double>(cells.get_used()));
    out.Set("posMin", static_cast<double>(cells.seq_pos_min(0)));
    out.Set("posMax", static_cast<double>(cells.seq_pos_max(0)));
    return out;
}

} // namespace

// memoryCells() -> { kind: 'iswa' | 'kv' | 'other', posMin, posMax, base, swa }
//   posMin/posMax: llama_memory_seq_pos_min/_max of sequence 0 (-1: empty)
//   base: { size, used, posMin, posMax } of the full-attention cache (kind 'iswa' or 'kv')
//   swa:  the same of the sliding-window cache (kind 'iswa'; else null)
Napi::Value Session::memory_cells(const Napi::CallbackInfo & info) {
    Napi::Env env       = info.Env();
    session_core & core = idle_core(env, "memoryCells: the session is generating; ask between requests");
    llama_memory_t mem  = llama_get_memory(core.ctx.get());
    Napi::Object out    = Napi::Object::New(env);
    out.Set("posMin", static_cast<double>(llama_memory_seq_pos_min(mem, 0)));
    out.Set("posMax", static_cast<double>(llama_memory_seq_pos_max(mem, 0)));
    out.Set("base", env.Null());
    out.Set("swa", env.Null());
    if (const auto * iswa = dynamic_cast<const llama_kv_cache_iswa *>(mem)) {
        out.Set("kind", "iswa");
        out.Set("base", cache_cells(env, *iswa->get_base()));
        out.Set("swa", cache_cells(env, *iswa->get_swa()));
    } else if (const auto * kv = dynamic_cast<const llama_kv_cache *>(mem)) {
        out.Set("kind", "kv");
        out.Set("base", cache_cells(env, *kv));
    } else {
        out.Set("kind", "other");
    }
    return out;
}

} // namespace power
