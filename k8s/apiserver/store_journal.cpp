#include "k8s/apiserver/store_journal.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace kozmo::apiserver {
namespace {

namespace fs = std::filesystem;

std::string sys_error(const std::string& what) { return what + ": " + std::strerror(errno); }

// Reads a JSON-lines file; a line that does not parse ends the file (a torn write).
template <class F>
void read_lines(const fs::path& path, F&& on_line) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty())
      continue;
    auto v = json::parse(line);
    if (!v)
      return;
    on_line(*v);
  }
}

std::string compose_key(const std::string& resource, const std::string& key) { return resource + '\n' + key; }

} // namespace

expected<std::unique_ptr<journal>> journal::open(const std::string& dir, loaded_state& out) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return error::internal("cannot create data dir " + dir + ": " + ec.message());

  // One server per data dir: a second one would interleave writes into the same log.
  int lock_fd = ::open((fs::path(dir) / "lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0)
    return error::internal(sys_error("cannot open " + (fs::path(dir) / "lock").string()));
  if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd);
    return error::internal("data dir " + dir + " is in use by another server");
  }

  std::map<std::string, record> objects;
  std::uint64_t rv = 0;
  read_lines(fs::path(dir) / "snapshot.jsonl", [&](const json::value& v) {
    if (const auto* r = v.find("rv"); r && r->is_int() && !v.find("r")) {
      rv = static_cast<std::uint64_t>(r->as_int());
      return;
    }
    record rec{v.get_string("r"), v.get_string("k"), v.find("o") ? *v.find("o") : json::value()};
    objects[compose_key(rec.resource, rec.key)] = std::move(rec);
  });
  read_lines(fs::path(dir) / "journal.jsonl", [&](const json::value& v) {
    auto line_rv = static_cast<std::uint64_t>(v.get_int("rv"));
    if (line_rv <= rv && line_rv != 0)
      return;  // already folded into the snapshot
    rv = std::max(rv, line_rv);
    std::string resource = v.get_string("r");
    std::string key = v.get_string("k");
    if (v.find("d")) {
      objects.erase(compose_key(resource, key));
      return;
    }
    objects[compose_key(resource, key)] = record{resource, key, v.find("o") ? *v.find("o") : json::value()};
  });
  out.rv = rv;
  for (auto& [k, rec] : objects)
    out.objects.push_back(std::move(rec));

  std::unique_ptr<journal> j(new journal(dir));
  j->lock_fd_ = lock_fd;
  // Fold the log into a fresh snapshot right away so the log starts empty.
  auto st = j->compact(rv, [&](const auto& sink) {
    for (const auto& rec : out.objects)
      sink(rec.resource, rec.key, rec.object);
  });
  if (!st)
    return st.err();
  return j;
}

journal::~journal() {
  if (log_)
    std::fclose(log_);
  if (lock_fd_ >= 0)
    ::close(lock_fd_);  // releases the flock
}

void journal::append_line(const std::string& line) {
  if (!log_)
    return;
  std::fwrite(line.data(), 1, line.size(), log_);
  std::fputc('\n', log_);
  std::fflush(log_);
  ++appended_;
}

void journal::append_put(std::uint64_t rv, const std::string& resource, const std::string& key,
                         const json::value& obj) {
  std::string line = "{\"rv\":" + std::to_string(rv) + ",\"r\":";
  json::write_string(line, resource);
  line += ",\"k\":";
  json::write_string(line, key);
  line += ",\"o\":";
  json::dump_to(line, obj);
  line += '}';
  append_line(line);
}

void journal::append_delete(std::uint64_t rv, const std::string& resource, const std::string& key) {
  std::string line = "{\"rv\":" + std::to_string(rv) + ",\"r\":";
  json::write_string(line, resource);
  line += ",\"k\":";
  json::write_string(line, key);
  line += ",\"d\":1}";
  append_line(line);
}

status journal::compact(std::uint64_t rv,
                        const std::function<void(const std::function<void(const std::string&, const std::string&,
                                                                          const json::value&)>&)>& each) {
  fs::path tmp = fs::path(dir_) / "snapshot.jsonl.tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    return error::internal(sys_error("cannot write " + tmp.string()));
  std::string line = "{\"rv\":" + std::to_string(rv) + "}\n";
  std::fwrite(line.data(), 1, line.size(), f);
  each([&](const std::string& resource, const std::string& key, const json::value& obj) {
    line = "{\"r\":";
    json::write_string(line, resource);
    line += ",\"k\":";
    json::write_string(line, key);
    line += ",\"o\":";
    json::dump_to(line, obj);
    line += "}\n";
    std::fwrite(line.data(), 1, line.size(), f);
  });
  std::fflush(f);
  ::fsync(fileno(f));
  bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed)
    return error::internal("cannot write " + tmp.string());
  std::error_code ec;
  fs::rename(tmp, fs::path(dir_) / "snapshot.jsonl", ec);
  if (ec)
    return error::internal("cannot replace snapshot: " + ec.message());
  if (log_)
    std::fclose(log_);
  fs::path log_path = fs::path(dir_) / "journal.jsonl";
  log_ = std::fopen(log_path.c_str(), "wb");  // truncates: everything is in the snapshot now
  if (!log_)
    return error::internal(sys_error("cannot open " + log_path.string()));
  appended_ = 0;
  return ok;
}

} // namespace kozmo::apiserver
