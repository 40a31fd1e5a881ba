// Splits a byte stream into lines. A watch response is one JSON object per line, but chunk
// boundaries fall anywhere: an event can span chunks and a chunk can hold several events.
#pragma once

#include <string>
#include <string_view>

namespace kozmo::client {

class line_splitter {
public:
  // Appends `data` and calls `on_line` for every completed line (without the '\n' and a
  // trailing '\r'; empty lines are skipped). Returns false as soon as `on_line` does, leaving
  // the rest unprocessed.
  template <class F>
  bool feed(std::string_view data, F&& on_line) {
    while (!data.empty()) {
      auto nl = data.find('\n');
      if (nl == std::string_view::npos) {
        partial_.append(data);
        return true;
      }
      std::string_view line;
      if (partial_.empty()) {
        line = data.substr(0, nl);
      } else {
        partial_.append(data.substr(0, nl));
        line = partial_;
      }
      data.remove_prefix(nl + 1);
      bool keep_going = deliver(line, on_line);
      partial_.clear();
      if (!keep_going) return false;
    }
    return true;
  }

  // At the end of the stream: delivers a last line that had no newline.
  template <class F>
  void finish(F&& on_line) {
    if (!partial_.empty()) deliver(std::string_view(partial_), on_line);
    partial_.clear();
  }

  std::size_t buffered() const { return partial_.size(); }

private:
  template <class F>
  static bool deliver(std::string_view line, F& on_line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) return true;
    return on_line(line);
  }

  std::string partial_;
};

} // namespace kozmo::client
