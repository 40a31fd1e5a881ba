// The HTTP front's handler (internal; not installed): Kozmo's HTTP API
// (actors/extender/http_api.hpp) as the engine serves it, on the embedded server's port and on
// the metrics, probe and extender addresses.
#pragma once

#include "actors/extender/http_api.hpp"
#include "k8s/apiserver/server.hpp"
#include "k8s/json/value.hpp"
#include "messages/scheduler_messages.hpp"

#include <caf/actor.hpp>
#include <caf/send.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>

namespace kozmo {

// Kozmo's HTTP API (actors/extender/http_api.hpp) on the embedded server's port: /metrics
// always, inspect while the scheduler runs. The same handler the extender's own server uses, so
// that both front doors answer alike. stop() takes the write lock before the actor system goes.
class local_backend final : public extender::extender_backend {
public:
  void filter(extender::filter_args a, extender::reply_fn<extender::filter_result> done) override {
    if (auto ext = extender())
      return ext->filter(std::move(a), std::move(done));
    refuse(done);
  }
  void preempt(extender::preempt_args a, extender::reply_fn<extender::preempt_result> done) override {
    if (auto ext = extender())
      return ext->preempt(std::move(a), std::move(done));
    refuse(done);
  }
  void bind(extender::bind_args a, extender::reply_fn<extender::bind_result> done) override {
    if (auto ext = extender())
      return ext->bind(std::move(a), std::move(done));
    refuse(done);
  }
  void inspect(std::string path, extender::inspect_fn done) override {
    if (auto ext = extender())
      return ext->inspect(std::move(path), std::move(done));
    std::shared_lock lock(mu_);
    if (!scheduler_)
      return done({503, json::dump(json::object{{"code", 503}, {"message", "the scheduler is not running"}})});
    caf::anon_send(scheduler_, inspect_callback{std::move(path), [done](inspect_reply r) {
                                                  done({r.status, std::move(r.body)});
                                                }});
  }
  void set_scheduler(caf::actor a) {
    std::unique_lock lock(mu_);
    scheduler_ = std::move(a);
  }
  // The extender verbs go to `ext` (the extender actor's backend) from now on. Null: they are
  // refused with `absent`.
  void set_extender(std::shared_ptr<extender::extender_backend> ext, error absent) {
    std::unique_lock lock(mu_);
    extender_ = std::move(ext);
    absent_ = std::move(absent);
  }
  void set_readiness(std::function<std::string()> f) {
    std::unique_lock lock(mu_);
    readiness_ = std::move(f);
  }
  std::string not_ready() override {
    std::shared_lock lock(mu_);
    return readiness_ ? readiness_() : std::string();
  }

  // A route of the embedded server: the answer goes to `reply` when the scheduler (or the
  // extender) gives it, on its thread; the server's io thread has moved on meanwhile.
  void answer(const std::string& method, const std::string& path, const std::string& body,
              apiserver::server::route_reply_fn reply) {
    extender::serve_request(*this, method, path, body, [reply = std::move(reply)](extender::http_answer a) {
      reply({static_cast<int>(a.status), std::move(a.body), a.content_type});
    });
  }

private:
  std::shared_ptr<extender::extender_backend> extender() {
    std::shared_lock lock(mu_);
    return extender_;
  }
  template <class T>
  void refuse(const extender::reply_fn<T>& done) {
    error why;
    {
      std::shared_lock lock(mu_);
      why = absent_;
    }
    done(std::move(why));
  }
  std::shared_mutex mu_;
  caf::actor scheduler_;
  std::shared_ptr<extender::extender_backend> extender_;
  error absent_ = error::not_found("Kozmo schedules pods directly here: there is no extender");
  std::function<std::string()> readiness_;
};

} // namespace kozmo
