#include "runtime/s3_xml.hpp"

#include <cstdlib>
#include <utility>

namespace kozmo::runtime::s3_xml {

std::string unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  static const std::pair<std::string_view, char> entities[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
  for (std::size_t i = 0; i < s.size();) {
    bool matched = false;
    if (s[i] == '&')
      for (const auto& [name, c] : entities)
        if (s.substr(i, name.size()) == name) {
          out += c;
          i += name.size();
          matched = true;
          break;
        }
    if (!matched)
      out += s[i++];
  }
  return out;
}

std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
    }
  }
  return out;
}

std::optional<std::string> tag(std::string_view xml, std::string_view tag, std::size_t from) {
  std::string open = "<" + std::string(tag) + ">", close = "</" + std::string(tag) + ">";
  auto a = xml.find(open, from);
  if (a == std::string_view::npos)
    return std::nullopt;
  a += open.size();
  auto b = xml.find(close, a);
  if (b == std::string_view::npos)
    return std::nullopt;
  return unescape(xml.substr(a, b - a));
}

list_page parse_list_page(std::string_view xml, std::string_view prefix) {
  list_page page;
  for (auto at = xml.find("<Contents>"); at != std::string_view::npos; at = xml.find("<Contents>", at + 1)) {
    auto end = xml.find("</Contents>", at);
    std::string_view item = xml.substr(at, (end == std::string_view::npos ? xml.size() : end) - at);
    auto key = tag(item, "Key");
    if (!key || key->size() <= prefix.size() || key->back() == '/')
      continue; // a "folder" marker
    list_item e;
    e.key = std::move(*key);
    e.size = std::strtoull(tag(item, "Size").value_or("0").c_str(), nullptr, 10);
    page.items.push_back(std::move(e));
  }
  page.truncated = tag(xml, "IsTruncated").value_or("false") == "true";
  if (page.truncated)
    page.continuation_token = tag(xml, "NextContinuationToken").value_or("");
  return page;
}

error_body parse_error(std::string_view xml) { return {tag(xml, "Code"), tag(xml, "Message")}; }

} // namespace kozmo::runtime::s3_xml
