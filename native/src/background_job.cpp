#include "background_job.h"

#include <exception>

#include "handles.h"

namespace power {

background_job::background_job(Napi::Env env) : deferred_(Napi::Promise::Deferred::New(env)) {}

Napi::Promise background_job::start(Napi::Env env, const char * name, work_fn work) {
    auto * job = new background_job(env);
    job->tsfn_ =
        Napi::TypedThreadSafeFunction<background_job, js_step, call_js>::New(env, name, 0, 1, job, finalize, static_cast<void *>(nullptr));
    live().jobs++;
    Napi::Promise promise = job->deferred_.Promise();
    job->thread_          = std::thread([job, work = std::move(work)]() {
        try {
            work(*job);
        } catch (const std::exception & e) {
            job->reject(e.what());
        } catch (...) {
            job->reject("unknown native failure");
        }
        if (!job->settled_) {
            job->reject("native job ended without a result");
        }
        job->tsfn_.Release();
    });
    return promise;
}

void background_job::post(js_step step) {
    tsfn_.BlockingCall(new js_step(std::move(step)));
}

void background_job::finish(js_step last) {
    if (settled_) {
        return;
    }
    settled_ = true;
    post(std::move(last));
}

void background_job::resolve(js_value make) {
    finish([this, make = std::move(make)](Napi::Env env) {
        Napi::HandleScope scope(env);
        Napi::Value value;
        try {
            value = make(env);
        } catch (const Napi::Error & e) {
            deferred_.Reject(e.Value());
            return;
        }
        deferred_.Resolve(value);
    });
}

void background_job::reject(const std::string & message) {
    finish([this, message](Napi::Env env) {
        Napi::HandleScope scope(env);
        deferred_.Reject(Napi::Error::New(env, message).Value());
    });
}

void background_job::call_js(Napi::Env env, Napi::Function, background_job *, js_step * step) {
    std::unique_ptr<js_step> owned(step);
    if (env == nullptr) {
        return; // environment is shutting down
    }
    try {
        (*owned)(env);
    } catch (const Napi::Error & e) {
        // a throwing JS callback must not escape into the event loop; surface it instead
        e.ThrowAsJavaScriptException();
    }
}

void background_job::finalize(Napi::Env, void *, background_job * job) {
    if (job->thread_.joinable()) {
        job->thread_.join();
    }
    live().jobs--;
    delete job;
}

} // namespace power
