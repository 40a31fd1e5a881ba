#include "k8s/apiserver/jsonpath.hpp"

#include <string>

namespace kozmo::apiserver {
namespace {

struct step {
  enum kind { field, index, wildcard, filter } what = field;
  std::string name;       // field name, or the filter's field path ("type" / "a.b")
  long idx = 0;
  std::string op;         // filter: "==" or "!="
  json::value literal;    // filter: value compared with
};

bool parse_literal(std::string_view s, json::value& out) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) {
    out = std::string(s.substr(1, s.size() - 2));
    return true;
  }
  if (s == "true" || s == "false") {
    out = s == "true";
    return true;
  }
  try {
    std::size_t used = 0;
    long long n = std::stoll(std::string(s), &used);
    if (used == s.size()) {
      out = n;
      return true;
    }
    double d = std::stod(std::string(s), &used);
    if (used == s.size()) {
      out = d;
      return true;
    }
  } catch (...) {
  }
  return false;
}

bool parse(std::string_view p, std::vector<step>& steps) {
  if (!p.empty() && p.front() == '{' && p.back() == '}')
    p = p.substr(1, p.size() - 2);
  if (!p.empty() && p.front() == '$')
    p.remove_prefix(1);
  std::size_t i = 0;
  while (i < p.size()) {
    if (p[i] == '.') {
      ++i;
      std::size_t j = i;
      while (j < p.size() && p[j] != '.' && p[j] != '[')
        ++j;
      if (j == i)
        continue;
      std::string name(p.substr(i, j - i));
      steps.push_back(name == "*" ? step{step::wildcard} : step{step::field, name});
      i = j;
    } else if (p[i] == '[') {
      auto close = p.find(']', i);
      if (close == std::string_view::npos)
        return false;
      std::string_view inner = p.substr(i + 1, close - i - 1);
      if (inner.rfind("?(", 0) == 0) {
        // Filters may contain ']' inside quotes: find the closing ")]".
        close = p.find(")]", i);
        if (close == std::string_view::npos)
          return false;
        inner = p.substr(i + 3, close - i - 3);
        ++close;
        std::size_t op_pos = inner.find("==");
        std::string op = "==";
        if (op_pos == std::string_view::npos) {
          op_pos = inner.find("!=");
          op = "!=";
        }
        if (op_pos == std::string_view::npos || inner.rfind("@.", 0) != 0)
          return false;
        step s{step::filter};
        s.name = std::string(inner.substr(2, op_pos - 2));
        while (!s.name.empty() && s.name.back() == ' ')
          s.name.pop_back();
        std::string_view lit = inner.substr(op_pos + 2);
        while (!lit.empty() && lit.front() == ' ')
          lit.remove_prefix(1);
        s.op = op;
        if (!parse_literal(lit, s.literal))
          return false;
        steps.push_back(std::move(s));
      } else if (inner == "*") {
        steps.push_back(step{step::wildcard});
      } else if (!inner.empty() && (inner.front() == '\'' || inner.front() == '"')) {
        steps.push_back(step{step::field, std::string(inner.substr(1, inner.size() - 2))});
      } else {
        try {
          steps.push_back(step{step::index, {}, std::stol(std::string(inner))});
        } catch (...) {
          return false;
        }
      }
      i = close + 1;
    } else {
      std::size_t j = i;
      while (j < p.size() && p[j] != '.' && p[j] != '[')
        ++j;
      steps.push_back(step{step::field, std::string(p.substr(i, j - i))});
      i = j;
    }
  }
  return true;
}

const json::value* dotted(const json::value& v, const std::string& path) {
  const json::value* cur = &v;
  std::size_t start = 0;
  while (cur) {
    auto dot = path.find('.', start);
    cur = cur->find(std::string_view(path).substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos)
      break;
    start = dot + 1;
  }
  return cur;
}

} // namespace

std::vector<const json::value*> jsonpath_find(const json::value& root, std::string_view path) {
  std::vector<step> steps;
  if (!parse(path, steps))
    return {};
  std::vector<const json::value*> cur{&root};
  for (const auto& s : steps) {
    std::vector<const json::value*> next;
    for (const auto* v : cur) {
      switch (s.what) {
      case step::field:
        if (const auto* c = v->find(s.name))
          next.push_back(c);
        break;
      case step::index:
        if (v->is_array()) {
          long n = static_cast<long>(v->as_array().size());
          long i = s.idx < 0 ? n + s.idx : s.idx;
          if (i >= 0 && i < n)
            next.push_back(&v->as_array()[static_cast<std::size_t>(i)]);
        }
        break;
      case step::wildcard:
        if (v->is_array())
          for (const auto& e : v->as_array())
            next.push_back(&e);
        else if (v->is_object())
          for (const auto& [k, e] : v->as_object())
            next.push_back(&e);
        break;
      case step::filter:
        if (v->is_array())
          for (const auto& e : v->as_array()) {
            const auto* field = dotted(e, s.name);
            bool eq = field && *field == s.literal;
            if ((s.op == "==") == eq)
              next.push_back(&e);
          }
        break;
      }
    }
    cur = std::move(next);
  }
  return cur;
}

} // namespace kozmo::apiserver
