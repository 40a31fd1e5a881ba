// Where the process runtime's container logs live and how they are written: the one thing the
// kubelet (which writes them) and the API server's pods/log endpoint (which reads them) share.
// Pure.
//
//   <root>/<namespace>_<pod>_<uid>/<container>/<restartCount>.log
//
// as a kubelet's /var/log/pods. `root` is <work dir>/logs/pods in `kozmo local`
// (pod_logs_root()). Each file holds one run's stdout and stderr in the CRI log format, a line
// per line of output:
//
//   2026-11-26T16:35:18.123456789Z stdout F hello
//
// (F: the line is complete; P: a piece of a longer line, the rest follows).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kozmo::pod_logs {

// The logs root under a work directory.
inline std::string pod_logs_root(const std::string& work_dir) { return work_dir + "/logs/pods"; }

inline std::string pod_dir(const std::string& root, const std::string& ns, const std::string& pod,
                           const std::string& uid) {
  return root + "/" + ns + "_" + pod + "_" + uid;
}

inline std::string container_log(const std::string& root, const std::string& ns, const std::string& pod,
                                 const std::string& uid, const std::string& container, int restart) {
  return pod_dir(root, ns, pod, uid) + "/" + container + "/" + std::to_string(restart) + ".log";
}

// One CRI log line, newline included.
inline std::string cri_line(std::string_view time, std::string_view stream, bool partial, std::string_view content) {
  std::string out;
  out.reserve(time.size() + stream.size() + content.size() + 5);
  out.append(time).append(" ").append(stream).append(partial ? " P " : " F ").append(content).append("\n");
  return out;
}

struct cri_entry {
  std::string_view time;
  std::string_view stream;
  bool partial = false;
  std::string_view content;
};

// A line (without its newline) split into its parts; nullopt when it is not a CRI line.
inline std::optional<cri_entry> parse_cri_line(std::string_view line) {
  auto s1 = line.find(' ');
  if (s1 == std::string_view::npos)
    return std::nullopt;
  auto s2 = line.find(' ', s1 + 1);
  if (s2 == std::string_view::npos || s2 + 2 > line.size())
    return std::nullopt;
  cri_entry e;
  e.time = line.substr(0, s1);
  e.stream = line.substr(s1 + 1, s2 - s1 - 1);
  char tag = line[s2 + 1];
  if (tag != 'F' && tag != 'P')
    return std::nullopt;
  e.partial = tag == 'P';
  e.content = s2 + 3 <= line.size() ? line.substr(s2 + 3) : std::string_view();
  return e;
}

// The output that the complete lines of `text` hold (text after its last newline is ignored):
// each line's content, a newline after every complete line, and with `timestamps` the time of
// each output line before it, as the kubelet prints them. `line_start`: false when `text`
// continues a line begun before (its first piece gets no time).
inline std::string decode_cri(std::string_view text, bool timestamps, bool line_start = true) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    if (nl == std::string_view::npos)
      break;
    auto e = parse_cri_line(text.substr(pos, nl - pos));
    pos = nl + 1;
    if (!e)
      continue;
    if (timestamps && line_start)
      out.append(e->time).append(" ");
    out.append(e->content);
    if (!e->partial)
      out.append("\n");
    line_start = !e->partial;
  }
  return out;
}

} // namespace kozmo::pod_logs
