// Label selectors: a port of the lexer and recursive-descent parser of
// k8s.io/apimachinery/pkg/labels (so that odd inputs fail or succeed exactly as on a real
// server), with the error wording of kube-apiserver v1.20.
#include "k8s/model/selector.hpp"

#include <algorithm>
#include <charconv>

namespace kozmo::k8s {
namespace {

enum class token {
  error, end, close_par, comma, does_not_exist, double_equals, equals, greater_than,
  identifier, in, less_than, not_equals, not_in, open_par
};

std::optional<token> keyword(std::string_view s) {
  static constexpr std::pair<std::string_view, token> table[] = {
      {")", token::close_par}, {",", token::comma}, {"!", token::does_not_exist},
      {"==", token::double_equals}, {"=", token::equals}, {">", token::greater_than},
      {"in", token::in}, {"<", token::less_than}, {"!=", token::not_equals},
      {"notin", token::not_in}, {"(", token::open_par}};
  for (auto& [text, tok] : table)
    if (text == s)
      return tok;
  return std::nullopt;
}

bool is_whitespace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool is_special(char c) {
  return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

struct scanned_item {
  token tok;
  std::string literal;
};

std::vector<scanned_item> lex(std::string_view s) {
  std::vector<scanned_item> items;
  std::size_t pos = 0;
  while (true) {
    while (pos < s.size() && is_whitespace(s[pos]))
      ++pos;
    if (pos >= s.size()) {
      items.push_back({token::end, ""});
      return items;
    }
    if (is_special(s[pos])) {
      // Longest run of special characters that forms an operator ("!=" over "!").
      std::string buffer;
      std::optional<scanned_item> last;
      while (pos < s.size() && is_special(s[pos])) {
        buffer.push_back(s[pos]);
        if (auto t = keyword(buffer)) {
          last = scanned_item{*t, buffer};
        } else if (last) {
          break;
        }
        ++pos;
      }
      if (!last)
        items.push_back({token::error, "error expected: keyword found '" + buffer + "'"});
      else
        items.push_back(std::move(*last));
      continue;
    }
    std::size_t start = pos;
    while (pos < s.size() && !is_special(s[pos]) && !is_whitespace(s[pos]))
      ++pos;
    std::string lit(s.substr(start, pos - start));
    auto t = keyword(lit);
    items.push_back({t ? *t : token::identifier, std::move(lit)});
  }
}

// Go's %q for the strings that appear in these messages.
std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i)
      out += sep;
    out += parts[i];
  }
  return out;
}

bool parse_int64(std::string_view s, std::int64_t& out) {
  if (!s.empty() && s[0] == '+')
    s.remove_prefix(1);
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc{} && ptr == s.data() + s.size();
}

class parser {
public:
  explicit parser(std::string_view text) : items_(lex(text)) {}

  expected<label_selector> parse() {
    label_selector sel;
    while (true) {
      auto [tok, lit] = lookahead();
      if (tok == token::end)
        return sel;
      if (tok != token::identifier && tok != token::does_not_exist)
        return fail("found '" + lit + "', expected: !, identifier, or 'end of string'");
      auto r = parse_requirement();
      if (!r)
        return fail("unable to parse requirement: " + r.err().message);
      sel.add(std::move(*r));
      auto [t, l] = consume();
      if (t == token::end)
        return sel;
      if (t != token::comma)
        return fail("found '" + l + "', expected: ',' or 'end of string'");
      auto [t2, l2] = lookahead();
      if (t2 != token::identifier && t2 != token::does_not_exist)
        return fail("found '" + l2 + "', expected: identifier after ','");
    }
  }

private:
  static error fail(std::string msg) { return error::bad_request(std::move(msg)); }

  // In value position the keywords "in" and "notin" are plain identifiers.
  static scanned_item as_value(scanned_item item) {
    if (item.tok == token::in || item.tok == token::not_in)
      item.tok = token::identifier;
    return item;
  }
  scanned_item lookahead() const { return as_value(items_[pos_]); }
  scanned_item consume() { return as_value(consume_operator()); }
  // The last item (end of string) is never passed.
  scanned_item consume_operator() {
    scanned_item item = items_[pos_];
    if (pos_ + 1 < items_.size())
      ++pos_;
    return item;
  }

  expected<label_requirement> parse_requirement() {
    scanned_item item = consume();
    std::optional<selector_operator> op;
    if (item.tok == token::does_not_exist) {
      op = selector_operator::does_not_exist;
      item = consume();
    }
    if (item.tok != token::identifier)
      return fail("found '" + item.literal + "', expected: identifier");
    std::string key = std::move(item.literal);
    if (auto errs = validate_qualified_name(key); !errs.empty())
      return fail("invalid label key " + quote(key) + ": " + join(errs, "; "));
    auto next = lookahead().tok;
    if ((next == token::end || next == token::comma) && !op)
      op = selector_operator::exists;
    if (op)
      return label_selector::make_requirement(std::move(key), *op, {});

    auto [op_tok, op_lit] = consume_operator();
    switch (op_tok) {
    case token::in: op = selector_operator::in; break;
    case token::not_in: op = selector_operator::not_in; break;
    case token::equals: op = selector_operator::equals; break;
    case token::double_equals: op = selector_operator::double_equals; break;
    case token::not_equals: op = selector_operator::not_equals; break;
    case token::greater_than: op = selector_operator::greater_than; break;
    case token::less_than: op = selector_operator::less_than; break;
    default: return fail("found '" + op_lit + "', expected: in, notin, =, ==, !=, gt, lt");
    }
    std::vector<std::string> values;
    status st = (*op == selector_operator::in || *op == selector_operator::not_in)
                    ? parse_values(values)
                    : parse_exact_value(values);
    if (!st)
      return st.err();
    return label_selector::make_requirement(std::move(key), *op, std::move(values));
  }

  status parse_values(std::vector<std::string>& values) {
    auto [tok, lit] = consume();
    if (tok != token::open_par)
      return fail("found '" + lit + "' expected: '('");
    auto [next, next_lit] = lookahead();
    if (next == token::close_par) {
      consume();
      values.push_back("");
      return ok;
    }
    if (next != token::identifier && next != token::comma)
      return fail("found '" + next_lit + "', expected: ',', ')' or identifier");
    if (auto st = parse_identifiers(values); !st)
      return st;
    if (consume().tok != token::close_par)
      return fail("found '" + next_lit + "', expected: ')'");
    return ok;
  }

  // A possibly empty, comma-separated list of possibly empty identifiers: "(a,,b)", "(,)".
  status parse_identifiers(std::vector<std::string>& values) {
    while (true) {
      auto [tok, lit] = consume();
      if (tok == token::identifier) {
        values.push_back(lit);
        auto [t2, l2] = lookahead();
        if (t2 == token::comma)
          continue;
        if (t2 == token::close_par)
          return ok;
        return fail("found '" + l2 + "', expected: ',' or ')'");
      }
      if (tok != token::comma)
        return fail("found '" + lit + "', expected: ',', or identifier");
      if (values.empty())
        values.push_back("");
      auto t2 = lookahead().tok;
      if (t2 == token::close_par) {
        values.push_back("");
        return ok;
      }
      if (t2 == token::comma)
        values.push_back("");
    }
  }

  status parse_exact_value(std::vector<std::string>& values) {
    auto t = lookahead().tok;
    if (t == token::end || t == token::comma) {
      values.push_back("");
      return ok;
    }
    auto [tok, lit] = consume();
    if (tok != token::identifier)
      return fail("found '" + lit + "', expected: identifier");
    values.push_back(lit);
    return ok;
  }

  std::vector<scanned_item> items_;
  std::size_t pos_ = 0;
};

template <class Lookup>
bool requirement_matches(const label_requirement& r, Lookup&& lookup) {
  const std::string* v = lookup(r.key);
  auto has = [&](const std::string& s) { return std::binary_search(r.values.begin(), r.values.end(), s); };
  switch (r.op) {
  case selector_operator::in:
  case selector_operator::equals:
  case selector_operator::double_equals:
    return v && has(*v);
  case selector_operator::not_in:
  case selector_operator::not_equals:
    return !v || !has(*v);
  case selector_operator::exists:
    return v != nullptr;
  case selector_operator::does_not_exist:
    return v == nullptr;
  case selector_operator::greater_than:
  case selector_operator::less_than: {
    std::int64_t have, want;
    if (!v || r.values.size() != 1 || !parse_int64(*v, have) || !parse_int64(r.values[0], want))
      return false;
    return r.op == selector_operator::greater_than ? have > want : have < want;
  }
  }
  return false;
}

template <class Lookup>
bool selector_matches(const label_selector& s, Lookup&& lookup) {
  if (s.matches_nothing())
    return false;
  for (auto& r : s.requirements())
    if (!requirement_matches(r, lookup))
      return false;
  return true;
}

} // namespace

bool label_requirement::matches(const std::function<const std::string*(std::string_view)>& lookup) const {
  return requirement_matches(*this, lookup);
}

std::string label_requirement::to_string() const {
  std::string out;
  if (op == selector_operator::does_not_exist)
    out += "!";
  out += key;
  switch (op) {
  case selector_operator::equals: out += "="; break;
  case selector_operator::double_equals: out += "=="; break;
  case selector_operator::not_equals: out += "!="; break;
  case selector_operator::in: out += " in ("; break;
  case selector_operator::not_in: out += " notin ("; break;
  case selector_operator::greater_than: out += ">"; break;
  case selector_operator::less_than: out += "<"; break;
  case selector_operator::exists:
  case selector_operator::does_not_exist: return out;
  }
  out += join(values, ",");
  if (op == selector_operator::in || op == selector_operator::not_in)
    out += ")";
  return out;
}

label_selector label_selector::nothing() {
  label_selector s;
  s.nothing_ = true;
  return s;
}

expected<label_selector> label_selector::parse(std::string_view text) { return parser(text).parse(); }

expected<label_requirement> label_selector::make_requirement(std::string key, selector_operator op,
                                                             std::vector<std::string> values) {
  if (auto errs = validate_qualified_name(key); !errs.empty())
    return error::bad_request("invalid label key " + quote(key) + ": " + join(errs, "; "));
  switch (op) {
  case selector_operator::in:
  case selector_operator::not_in:
    if (values.empty())
      return error::bad_request("for 'in', 'notin' operators, values set can't be empty");
    break;
  case selector_operator::equals:
  case selector_operator::double_equals:
  case selector_operator::not_equals:
    if (values.size() != 1)
      return error::bad_request("exact-match compatibility requires one single value");
    break;
  case selector_operator::exists:
  case selector_operator::does_not_exist:
    if (!values.empty())
      return error::bad_request("values set must be empty for exists and does not exist");
    break;
  case selector_operator::greater_than:
  case selector_operator::less_than: {
    std::int64_t unused;
    if (values.size() != 1)
      return error::bad_request("for 'Gt', 'Lt' operators, exactly one value is required");
    if (!parse_int64(values[0], unused))
      return error::bad_request("for 'Gt', 'Lt' operators, the value must be an integer");
    break;
  }
  }
  for (auto& v : values)
    if (auto errs = validate_label_value(v); !errs.empty())
      return error::bad_request("invalid label value: " + quote(v) + ": at key: " + quote(key) + ": " +
                                join(errs, "; "));
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return label_requirement{std::move(key), op, std::move(values)};
}

expected<label_selector> label_selector::from_json(const json::value& object) {
  if (object.is_null())
    return nothing();
  if (!object.is_object())
    return error::bad_request("a label selector must be a JSON object");
  label_selector sel;
  if (const auto* ml = object.find("matchLabels"); ml && !ml->is_null()) {
    if (!ml->is_object())
      return error::bad_request("matchLabels: expected an object");
    for (auto& [k, v] : ml->as_object()) {
      if (!v.is_string())
        return error::bad_request("matchLabels[" + k + "]: expected a string");
      auto r = make_requirement(k, selector_operator::equals, {v.as_string()});
      if (!r)
        return r.err();
      sel.add(std::move(*r));
    }
  }
  if (const auto* me = object.find("matchExpressions"); me && !me->is_null()) {
    if (!me->is_array())
      return error::bad_request("matchExpressions: expected an array");
    for (auto& expr : me->as_array()) {
      std::string op_name = expr.get_string("operator");
      selector_operator op;
      if (op_name == "In")
        op = selector_operator::in;
      else if (op_name == "NotIn")
        op = selector_operator::not_in;
      else if (op_name == "Exists")
        op = selector_operator::exists;
      else if (op_name == "DoesNotExist")
        op = selector_operator::does_not_exist;
      else
        return error::bad_request(quote(op_name) + " is not a valid label selector operator");
      std::vector<std::string> values;
      if (const auto* vs = expr.find("values"); vs && vs->is_array())
        for (auto& v : vs->as_array())
          if (v.is_string())
            values.push_back(v.as_string());
      auto r = make_requirement(expr.get_string("key"), op, std::move(values));
      if (!r)
        return r.err();
      sel.add(std::move(*r));
    }
  }
  return sel;
}

label_selector label_selector::from_set(const string_map& labels) {
  label_selector sel;
  for (auto& [k, v] : labels)
    sel.requirements_.push_back({k, selector_operator::equals, {v}});
  return sel;
}

void label_selector::add(label_requirement r) {
  auto at = std::upper_bound(requirements_.begin(), requirements_.end(), r.key,
                             [](const std::string& key, const label_requirement& x) { return key < x.key; });
  requirements_.insert(at, std::move(r));
}

bool label_selector::matches(const json::value& labels) const {
  return selector_matches(*this, [&](std::string_view key) -> const std::string* {
    const json::value* v = labels.find(key);
    return v && v->is_string() ? &v->as_string() : nullptr;
  });
}

bool label_selector::matches(const string_map& labels) const {
  return selector_matches(*this, [&](std::string_view key) -> const std::string* {
    auto it = labels.find(key);
    return it == labels.end() ? nullptr : &it->second;
  });
}

bool label_selector::matches(const std::map<std::string, std::string>& labels) const {
  return selector_matches(*this, [&](std::string_view key) -> const std::string* {
    auto it = labels.find(std::string(key));
    return it == labels.end() ? nullptr : &it->second;
  });
}

std::string label_selector::to_string() const {
  std::string out;
  for (std::size_t i = 0; i < requirements_.size(); ++i) {
    if (i)
      out += ",";
    out += requirements_[i].to_string();
  }
  return out;
}

std::optional<std::string> label_selector::requires_exact_match(std::string_view key) const {
  for (auto& r : requirements_) {
    if (r.key != key)
      continue;
    bool exact = r.op == selector_operator::equals || r.op == selector_operator::double_equals ||
                 r.op == selector_operator::in;
    if (exact && r.values.size() == 1)
      return r.values[0];
    return std::nullopt;
  }
  return std::nullopt;
}

} // namespace kozmo::k8s
