// YAML read event by event (yaml-cpp's parser, our own tree builder) so that what a document
// costs is counted as it is built: an alias is a copy of its anchor's value, and a few hundred
// bytes of nested aliases ("billion laughs", CVE-2019-11253) would otherwise expand to billions
// of nodes. The budget is kube-apiserver's (its YAML decoder, go-yaml): every node built counts,
// and the share of nodes that come from aliases may be at most 99% up to 400,000 nodes, falling
// linearly to 10% at 4,000,000 and beyond; an anchor may not contain an alias of itself.
#include "k8s/json/yaml.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <charconv>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <unordered_map>

namespace kozmo::json {
namespace {

// A document over the budget (or otherwise unreadable as JSON), thrown from inside the
// parser's callbacks and caught in parse_*: the parser cannot be stopped another way.
struct refused {
  std::string message;
};

bool digits(std::string_view s) {
  if (s.empty())
    return false;
  for (char c : s)
    if (c < '0' || c > '9')
      return false;
  return true;
}

std::string_view unsigned_part(std::string_view s) {
  if (!s.empty() && (s.front() == '-' || s.front() == '+'))
    s.remove_prefix(1);
  return s;
}

// YAML 1.1 core schema floats as plain scalars write them: 1.5, .5, 1., 1e3, -2.5E-3.
bool float_text(std::string_view s) {
  s = unsigned_part(s);
  auto e = s.find_first_of("eE");
  std::string_view mantissa = s.substr(0, e);
  if (e != std::string_view::npos) {
    std::string_view exponent = unsigned_part(s.substr(e + 1));
    if (!digits(exponent))
      return false;
  }
  auto dot = mantissa.find('.');
  if (dot == std::string_view::npos)
    return digits(mantissa);
  std::string_view whole = mantissa.substr(0, dot), frac = mantissa.substr(dot + 1);
  if (whole.empty())
    return digits(frac);
  return digits(whole) && (frac.empty() || digits(frac));
}

// A plain scalar typed as YAML 1.1's core schema does it; quoted ones are always strings.
value typed_scalar(const std::string& tag, const std::string& s) {
  if (tag == "!" || tag == "tag:yaml.org,2002:str")
    return s;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL")
    return nullptr;
  if (s == "true" || s == "True" || s == "TRUE")
    return true;
  if (s == "false" || s == "False" || s == "FALSE")
    return false;
  if (digits(unsigned_part(s))) {
    long long n = 0;
    const char* first = s.data() + (s.front() == '+' ? 1 : 0);
    auto [end, ec] = std::from_chars(first, s.data() + s.size(), n);
    if (ec == std::errc() && end == s.data() + s.size())
      return n;
    return std::strtod(s.c_str(), nullptr); // beyond int64: a float, as go-yaml reads it
  }
  if (float_text(s))
    return std::strtod(s.c_str(), nullptr);
  return s;
}

// The share of a document's nodes that may come from aliases, by how many nodes it has.
double allowed_alias_share(std::size_t nodes) {
  constexpr double low = 400000, high = 4000000;
  if (nodes <= low)
    return 0.99;
  if (nodes >= high)
    return 0.10;
  return 0.99 - 0.89 * ((static_cast<double>(nodes) - low) / (high - low));
}

class tree_builder final : public YAML::EventHandler {
public:
  explicit tree_builder(std::size_t text_size) : max_events_(4 * text_size + 64) {}

  // The documents built so far (empty ones as null).
  std::vector<value> documents;

  void OnDocumentStart(const YAML::Mark&) override {
    event();
    stack_.clear();
    anchors_.clear();
    names_.clear();
    nodes_ = aliased_ = copies_ = 0;
    root_.reset();
  }
  void OnDocumentEnd() override { documents.push_back(root_ ? std::move(*root_) : value(nullptr)); }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    event();
    if (awaiting_key()) {
      count(1, false);
      stack_.back().key = "null";
      return;
    }
    count(1, false);
    finish(nullptr, anchor, nodes_ - 1, mark);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    event();
    auto it = anchors_.find(anchor);
    if (it == anchors_.end())
      throw refused{at(mark) + "anchor '" + name_of(anchor) + "' value contains itself"};
    if (awaiting_key()) {
      if (!it->second.v.is_string())
        throw refused{at(mark) + "a mapping key must be a scalar, not an alias of a " +
                      (it->second.v.is_object() ? "mapping" : "sequence")};
      stack_.back().key = it->second.v.as_string();
      return;
    }
    count(it->second.nodes, true);
    copied(it->second.nodes);
    place(value(it->second.v), mark);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& text) override {
    event();
    if (awaiting_key()) {
      count(1, false);
      stack_.back().key = text;
      if (anchor != YAML::NullAnchor) {
        remember_name(anchor);
        anchors_[anchor] = {value(text), 1};
      }
      return;
    }
    count(1, false);
    finish(typed_scalar(tag, text), anchor, nodes_ - 1, mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(array{}, anchor, mark);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(object{}, anchor, mark);
  }
  void OnMapEnd() override { close(); }
  void OnAnchor(const YAML::Mark&, const std::string& name) override { pending_name_ = name; }

private:
  struct frame {
    value v;
    std::optional<std::string> key; // a mapping's key whose value comes next
    YAML::anchor_t anchor = YAML::NullAnchor;
    std::size_t nodes_before = 0; // the document's node count when this node began
    YAML::Mark mark;
  };
  struct anchored {
    value v;
    std::size_t nodes = 1; // what one alias of it costs
  };

  static std::string at(const YAML::Mark& m) {
    return "yaml: line " + std::to_string(m.line + 1) + ": ";
  }
  std::string name_of(YAML::anchor_t a) const {
    auto it = names_.find(a);
    return it == names_.end() ? std::to_string(a) : it->second;
  }
  bool awaiting_key() const { return !stack_.empty() && stack_.back().v.is_object() && !stack_.back().key; }

  void remember_name(YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor && !pending_name_.empty())
      names_[anchor] = pending_name_;
    pending_name_.clear();
  }

  // Counts `n` more nodes (from an alias when `aliased`) and refuses the document once the
  // aliases' share is over the budget, before the copy is made.
  void count(std::size_t n, bool aliased) {
    nodes_ += n;
    if (aliased)
      aliased_ += n;
    if (aliased_ > 100 && nodes_ > 1000 &&
        static_cast<double>(aliased_) / static_cast<double>(nodes_) > allowed_alias_share(nodes_))
      throw refused{"yaml: document contains excessive aliasing: " + std::to_string(aliased_) + " of its " +
                    std::to_string(nodes_) +
                    " nodes come from aliases (the limit: 99% of up to 400000 nodes, falling to 10% at 4000000)"};
  }

  // Every node and document takes some of the text: a few events per byte at most. yaml-cpp
  // 0.7 can loop on some malformed input (stray bytes after a tag), handing out empty documents
  // without end; this bound ends such a parse with an error instead of exhausting memory.
  void event() {
    if (++events_ > max_events_)
      throw refused{"yaml: the parser produced more than " + std::to_string(max_events_) +
                    " nodes and documents from a text of " + std::to_string((max_events_ - 64) / 4) +
                    " bytes; the text is malformed"};
  }

  // Copies made of anchored values (to keep them, and for each alias) are work the node count
  // does not see when anchors nest: bounded on their own.
  void copied(std::size_t n) {
    copies_ += n;
    if (copies_ > max_copied_nodes)
      throw refused{"yaml: document too complex: its anchors and aliases copy more than " +
                    std::to_string(max_copied_nodes) + " nodes"};
  }

  void open(value v, YAML::anchor_t anchor, const YAML::Mark& mark) {
    event();
    if (awaiting_key())
      throw refused{at(mark) + "a mapping key must be a scalar, not a " + (v.is_object() ? "mapping" : "sequence")};
    remember_name(anchor);
    count(1, false);
    stack_.push_back(frame{std::move(v), std::nullopt, anchor, nodes_ - 1, mark});
  }

  void close() {
    frame f = std::move(stack_.back());
    stack_.pop_back();
    finish(std::move(f.v), f.anchor, f.nodes_before, f.mark);
  }

  // A complete node: remembered under its anchor, then placed in its parent.
  void finish(value v, YAML::anchor_t anchor, std::size_t nodes_before, const YAML::Mark& mark) {
    if (anchor != YAML::NullAnchor) {
      remember_name(anchor);
      copied(nodes_ - nodes_before);
      anchors_[anchor] = {v, nodes_ - nodes_before};
    }
    place(std::move(v), mark);
  }

  void place(value v, const YAML::Mark&) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return;
    }
    frame& parent = stack_.back();
    if (parent.v.is_array()) {
      parent.v.as_array().push_back(std::move(v));
      return;
    }
    parent.v.as_object().set(*parent.key, std::move(v));
    parent.key.reset();
  }

  std::vector<frame> stack_;
  std::optional<value> root_;
  std::unordered_map<YAML::anchor_t, anchored> anchors_;
  std::unordered_map<YAML::anchor_t, std::string> names_;
  std::string pending_name_;
  std::size_t nodes_ = 0;   // nodes built in this document, aliases' copies included
  std::size_t aliased_ = 0; // of which from aliases
  std::size_t copies_ = 0;  // nodes copied for anchors and aliases
  std::size_t events_ = 0;  // nodes and documents read from the text, in the whole stream
  std::size_t max_events_;
  static constexpr std::size_t max_copied_nodes = 16'000'000;
};

expected<std::vector<value>> parse_all(std::string_view text, bool first_only) {
  try {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    tree_builder builder(text.size());
    while (parser.HandleNextDocument(builder))
      if (first_only)
        break;
    return std::move(builder.documents);
  } catch (const refused& r) {
    return error::bad_request(r.message);
  } catch (const YAML::Exception& e) {
    return error::bad_request(std::string("yaml: ") + e.what());
  }
}

} // namespace

expected<value> parse_yaml(std::string_view text) {
  auto docs = parse_all(text, true);
  if (!docs)
    return docs.err();
  if (docs->empty())
    return value(nullptr);
  return std::move(docs->front());
}

expected<std::vector<value>> parse_yaml_documents(std::string_view text) {
  auto docs = parse_all(text, false);
  if (!docs)
    return docs.err();
  std::vector<value> out;
  for (auto& d : *docs)
    if (!d.is_null())
      out.push_back(std::move(d));
  return out;
}

} // namespace kozmo::json
