#pragma once
// Long native work (loading, context creation, generation) runs on its own thread. Everything
// it tells JS - progress, streamed tokens, the final outcome - goes through one thread-safe
// function, so JS sees the events in the order they happened and the promise settles only
// after the last event. No JS is ever called off the main thread.

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <napi.h>

namespace power {

class background_job {
  public:
    // runs on the JS thread with the JS environment
    using js_step = std::function<void(Napi::Env)>;
    // builds the resolved value on the JS thread
    using js_value = std::function<Napi::Value(Napi::Env)>;
    // the work; runs on the job's thread and ends by calling resolve() or reject()
    using work_fn = std::function<void(background_job &)>;

    // starts `work` on a new thread and returns the promise it settles
    static Napi::Promise start(Napi::Env env, const char * name, work_fn work);

    // queues a step for the JS thread (in order with every other step)
    void post(js_step step);

    // settles the promise with a value built on the JS thread; the last call a job makes
    void resolve(js_value make);

    // rejects the promise with an Error carrying `message`; the last call a job makes
    void reject(const std::string & message);

  private:
    background_job(Napi::Env env);
    static void call_js(Napi::Env env, Napi::Function, background_job * job, js_step * step);
    static void finalize(Napi::Env env, void *, background_job * job);
    void finish(js_step last);

    Napi::Promise::Deferred deferred_;
    Napi::TypedThreadSafeFunction<background_job, js_step, call_js> tsfn_;
    std::thread thread_;
    bool settled_ = false;
};

} // namespace power
