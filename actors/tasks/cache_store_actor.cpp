#include "actors/tasks/cache_store_actor.hpp"

#include "actors/controller/clock.hpp"
#include "actors/controller/watch_into.hpp"
#include "k8s/client/client.hpp"
#include "k8s/model/custom_object.hpp"
#include "messages/watch_messages.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <unordered_map>

namespace kozmo::tasks {
namespace {

// An answer of the API server (from the client's io thread), for operation `id`.
struct cache_io {
  std::uint64_t id = 0;
  bool write = false; // the answer of a write (else of the GET)
  std::shared_ptr<expected<json::value>> result;
};
KOZMO_LOCAL_MESSAGE(cache_io)

struct operation {
  cache_request req;
  caf::response_promise rp;
  caf::actor asker;
  std::string key;
  std::string slot; // "ns/key": operations on one slot run one after another
  int conflicts = 0;
  bool notify = false; // the write lets waiting tasks go on
  std::optional<json::value> current; // the entry object as read (nullopt: none)
  std::optional<cache_entry> after;
};

// The inputs of a task's first question, digested on the worker.
struct digest_job {
  std::map<std::string, std::string> inputs; // name → URI
};
struct digest_result {
  std::shared_ptr<expected<std::map<std::string, std::string>>> digests;
};
KOZMO_LOCAL_MESSAGE(digest_job)
KOZMO_LOCAL_MESSAGE(digest_result)

struct store_state {
  static inline const char* name = "cache_store";
  cache_store_config cfg;
  caf::actor digester; // a detached worker: digests may read large files
  std::uint64_t next_id = 0;
  std::unordered_map<std::uint64_t, operation> running; // by id
  // By slot: present while an operation of the slot runs, holding those that wait behind it.
  std::unordered_map<std::string, std::deque<operation>> queued;
  // Entries with stored outputs, by slot, from a watch of the entries: a hit is answered from
  // here without a request (outputs are only ever replaced; a deleted entry leaves the index).
  std::unordered_map<std::string, cache_entry> stored;
  caf::actor watch;
  // Tasks that wait on a slot (they saw another's reservation).
  std::unordered_map<std::string, std::vector<caf::actor>> waiters;
};

using store_actor = caf::stateful_actor<store_state>;

time_point now(store_actor* self) { return self->state.cfg.time->now(); }

client::resource_ref entry_ref(const std::string& ns, const std::string& key = {}) {
  return {group, version, cache_entry_resource, ns, key.empty() ? std::string() : cache_entry_name(key), ""};
}

void send_get(store_actor* self, std::uint64_t id);

void finish(store_actor* self, std::uint64_t id, std::string error = {}) {
  auto& st = self->state;
  auto it = st.running.find(id);
  if (it == st.running.end())
    return;
  operation op = std::move(it->second);
  st.running.erase(it);
  cache_answer a;
  a.known = true;
  a.key = op.key;
  a.at = now(self);
  a.error = std::move(error);
  if (op.after)
    a.entry = op.after;
  else if (op.current)
    a.entry = cache_entry_from_json(*op.current);
  const auto& ask = op.req.ask;
  if (a.error.empty() && ask.op == cache_op::reserve && !holds_reservation(a.entry, ask.owner, a.at) &&
      !(a.entry && a.entry->outputs && !ask.overwrite) && op.asker) {
    auto& w = st.waiters[op.slot];
    if (std::find(w.begin(), w.end(), op.asker) == w.end())
      w.push_back(op.asker);
  }
  op.rp.deliver(cache_reply{std::move(a)});
  // The next operation on the slot.
  auto q = st.queued.find(op.slot);
  if (q == st.queued.end())
    return;
  if (q->second.empty()) {
    st.queued.erase(q);
    return;
  }
  operation next = std::move(q->second.front());
  q->second.pop_front();
  auto nid = ++st.next_id;
  st.running.emplace(nid, std::move(next));
  send_get(self, nid);
}

void notify(store_actor* self, const operation& op) {
  auto& st = self->state;
  auto it = st.waiters.find(op.slot);
  if (it == st.waiters.end())
    return;
  for (auto& w : it->second)
    if (w != op.asker)
      self->send(w, cache_changed{op.req.ns, op.key});
  st.waiters.erase(it);
}

void send_get(store_actor* self, std::uint64_t id) {
  auto& op = self->state.running.at(id);
  caf::actor me = caf::actor_cast<caf::actor>(self);
  self->state.cfg.cli->get(entry_ref(op.req.ns, op.key), [me, id](expected<json::value> r) {
    caf::anon_send(me, cache_io{id, false, std::make_shared<expected<json::value>>(std::move(r))});
  });
}

void on_read(store_actor* self, std::uint64_t id, expected<json::value>& r) {
  auto& op = self->state.running.at(id);
  if (!r && r.err().code != 404) {
    finish(self, id, r.err().message);
    return;
  }
  op.current.reset();
  if (r)
    op.current = std::move(*r);
  std::optional<cache_entry> current;
  if (op.current)
    current = cache_entry_from_json(*op.current);
  cache_op_args args;
  args.op = op.req.ask.op;
  args.key = op.key;
  args.signature = op.req.ask.signature;
  args.owner = op.req.ask.owner;
  args.now = now(self);
  args.heartbeat = op.req.heartbeat;
  args.overwrite = op.req.ask.overwrite;
  args.outputs = op.req.ask.outputs;
  auto change = apply_cache_op(current, args);
  op.after = change.entry;
  if (!change.write) {
    finish(self, id);
    return;
  }
  json::value body = cache_entry_to_json(*change.entry, op.req.ns);
  if (op.current) {
    // Everything of the object as read (labels, annotations a user set), with the new spec; the
    // resourceVersion makes a concurrent write a 409.
    json::value updated = *op.current;
    updated["spec"] = std::move(body["spec"]);
    body = std::move(updated);
  }
  op.notify = change.notify;
  caf::actor me = caf::actor_cast<caf::actor>(self);
  auto done = [me, id](expected<json::value> w) {
    caf::anon_send(me, cache_io{id, true, std::make_shared<expected<json::value>>(std::move(w))});
  };
  if (op.current)
    self->state.cfg.cli->update(entry_ref(op.req.ns, op.key), body, std::move(done));
  else
    self->state.cfg.cli->create(entry_ref(op.req.ns), body, std::move(done));
}

void on_written(store_actor* self, std::uint64_t id, expected<json::value>& w) {
  auto& op = self->state.running.at(id);
  if (w) {
    op.after = cache_entry_from_json(*w);
    // Stored outputs answer hits from now on, before the watch brings the entry back.
    if (op.after->outputs && op.after->key == op.key)
      self->state.stored[op.slot] = *op.after;
    if (op.notify)
      notify(self, op);
    finish(self, id);
    return;
  }
  if ((w.err().code == 409) && ++op.conflicts <= self->state.cfg.max_conflicts) {
    op.after.reset();
    send_get(self, id); // another write came first: read it and apply the operation again
    return;
  }
  spdlog::warn("tasks: writing the cache entry {} in {}: {}", cache_entry_name(op.key), op.req.ns, w.err().message);
  op.after.reset();
  finish(self, id, w.err().message);
}

// Runs `op` now, or after the one running on its slot.
void start(store_actor* self, operation op) {
  auto& st = self->state;
  op.slot = op.req.ns + "/" + op.key;
  const auto& ask = op.req.ask;
  bool reads = ask.op == cache_op::lookup || ask.op == cache_op::reserve;
  if (reads && !ask.overwrite && !st.queued.count(op.slot)) {
    if (auto it = st.stored.find(op.slot); it != st.stored.end()) {
      cache_answer a;
      a.known = true;
      a.key = op.key;
      a.at = now(self);
      a.entry = it->second;
      op.rp.deliver(cache_reply{std::move(a)});
      return;
    }
  }
  if (auto q = st.queued.find(op.slot); q != st.queued.end()) {
    q->second.push_back(std::move(op));
    return;
  }
  st.queued.emplace(op.slot, std::deque<operation>{}); // the slot runs this one; later ones queue
  auto id = ++st.next_id;
  st.running.emplace(id, std::move(op));
  send_get(self, id);
}

// Every input's digest by name; the first that cannot be read is the error.
expected<std::map<std::string, std::string>> digest_all(const std::map<std::string, std::string>& inputs,
                                                         const input_digester& digest) {
  std::map<std::string, std::string> out;
  for (const auto& [name, uri] : inputs) {
    auto d = digest(uri);
    if (!d)
      return error::invalid("input " + name + " (" + uri + "): " + d.err().message);
    out[name] = std::move(*d);
  }
  return out;
}

caf::behavior digest_worker(caf::event_based_actor*, input_digester digest) {
  return {
      [digest](digest_job& job) {
        return digest_result{std::make_shared<expected<std::map<std::string, std::string>>>(digest_all(job.inputs, digest))};
      },
  };
}

caf::behavior cache_store(store_actor* self, cache_store_config cfg) {
  if (!cfg.time)
    cfg.time = controller::real_clock();
  self->state.cfg = std::move(cfg);
  self->state.digester = self->system().spawn<caf::detached>(digest_worker, self->state.cfg.digest);
  self->link_to(self->state.digester);
  watch::watch_config wc;
  wc.resource = entry_ref("");
  self->state.watch = controller::watch_into<k8s::custom_object>(self, self->state.cfg.cli, wc);
  return {
      [self](object_event<k8s::custom_object>& ev) {
        if (!ev.object)
          return;
        auto entry = cache_entry_from_json(ev.object->document);
        std::string slot = ev.object->metadata.namespace_ + "/" + entry.key;
        if (ev.type == watch::event_type::deleted || !entry.outputs || entry.key.empty() ||
            cache_entry_name(entry.key) != ev.object->metadata.name)
          self->state.stored.erase(slot);
        else
          self->state.stored[slot] = std::move(entry);
      },
      [self](cache_request& req) -> caf::result<cache_reply> {
        operation op;
        // The sender first: making the promise takes it out of the current message.
        op.asker = caf::actor_cast<caf::actor>(self->current_sender());
        op.rp = self->make_response_promise<cache_reply>();
        op.key = req.ask.key;
        auto rp = op.rp;
        if (!op.key.empty() || req.ask.inputs.empty()) {
          if (op.key.empty())
            op.key = cache_key(req.ask.signature, {});
          op.req = std::move(req);
          start(self, std::move(op));
          return rp;
        }
        // A task's first question carries no key: derive it from the signature and the inputs'
        // digests, read on the worker when a file:// input is to be read, else at once (a hop
        // to the worker's thread and back cost a hit tens of ms in a burst).
        auto inputs = req.ask.inputs;
        op.req = std::move(req);
        if (std::none_of(inputs.begin(), inputs.end(), [](const auto& in) { return reads_content(in.second); })) {
          op.key = cache_key(op.req.ask.signature, *digest_all(inputs, digest_by_uri));
          start(self, std::move(op));
          return rp;
        }
        auto shared = std::make_shared<operation>(std::move(op));
        self->request(self->state.digester, caf::infinite, digest_job{std::move(inputs)})
            .then([self, shared](digest_result& r) {
              auto& op = *shared;
              if (!*r.digests) {
                cache_answer a;
                a.known = true;
                a.at = now(self);
                a.error = r.digests->err().message;
                op.rp.deliver(cache_reply{std::move(a)});
                return;
              }
              op.key = cache_key(op.req.ask.signature, **r.digests);
              start(self, std::move(op));
            });
        return rp;
      },
      [self](cache_io& io) {
        if (!self->state.running.count(io.id))
          return;
        if (io.write)
          on_written(self, io.id, *io.result);
        else
          on_read(self, io.id, *io.result);
      },
  };
}

} // namespace

expected<std::string> digest_by_uri(const std::string& uri) { return "uri:" + sha256_hex(uri); }

bool reads_content(const std::string& uri) { return uri.rfind("file://", 0) == 0; }

namespace {

expected<std::string> file_sha256(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return error::invalid("cannot read " + path.string() + ": " + std::strerror(errno));
  sha256 h;
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0)
      h.update(buf.data(), static_cast<std::size_t>(in.gcount()));
  }
  return h.hex();
}

} // namespace

expected<std::string> digest_by_content(const std::string& uri) {
  const std::string scheme = "file://";
  if (!reads_content(uri))
    return digest_by_uri(uri);
  namespace fs = std::filesystem;
  fs::path path = uri.substr(scheme.size());
  std::error_code ec;
  auto status = fs::status(path, ec);
  if (ec || !fs::exists(status))
    return error::invalid(path.string() + " does not exist (its content is part of the cache key)");
  if (fs::is_regular_file(status)) {
    auto d = file_sha256(path);
    if (!d)
      return d;
    return "sha256:" + *d;
  }
  // A directory: every regular file under it, by relative path.
  std::vector<std::pair<std::string, std::string>> files;
  for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file())
      continue;
    auto d = file_sha256(it->path());
    if (!d)
      return d;
    files.emplace_back(fs::relative(it->path(), path).string(), *d);
  }
  if (ec)
    return error::invalid("cannot list " + path.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());
  std::string text;
  for (const auto& [rel, d] : files)
    text += rel + " " + d + "\n";
  return "tree:" + sha256_hex(text);
}

caf::actor spawn_cache_store(caf::actor_system& sys, cache_store_config cfg) {
  return sys.spawn(cache_store, std::move(cfg));
}

} // namespace kozmo::tasks
