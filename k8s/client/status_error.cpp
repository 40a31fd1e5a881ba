#include "k8s/client/status_error.hpp"

#include "k8s/json/value.hpp"
#include "k8s/protobuf_wire.hpp"

#include <string>

namespace kozmo::client {
namespace {

// The reason Kubernetes uses for a status code when the body does not say.
std::string_view default_reason(int status) {
  switch (status) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 406: return "NotAcceptable";
    case 409: return "Conflict";
    case 410: return "Expired";
    case 413: return "RequestEntityTooLarge";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 500: return "InternalError";
    case 503: return "ServiceUnavailable";
    case 504: return "Timeout";
    default: return "";
  }
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\r' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

} // namespace

error error_from_response(int status, std::string_view reason_phrase, std::string_view body) {
  error e;
  e.code = status;
  e.reason = std::string(default_reason(status));
  std::string_view text = trim(body);
  if (!text.empty() && text.front() == '{') {
    auto doc = json::parse(text);
    if (doc && doc->is_object() && doc->get_string("kind") == "Status") {
      std::string message = doc->get_string("message");
      std::string reason = doc->get_string("reason");
      std::int64_t code = doc->get_int("code", status);
      if (!message.empty()) e.message = std::move(message);
      if (!reason.empty()) e.reason = std::move(reason);
      if (code > 0) e.code = static_cast<int>(code);
    }
  }
  // A client that accepts protobuf gets its errors in protobuf too: Status {2: status,
  // 3: message, 4: reason, 5: details, 6: code}.
  if (auto env = k8s::protobuf::open_envelope(body); env && env->kind == "Status") {
    k8s::protobuf::each_field(env->raw, [&](const k8s::protobuf::field& f) {
      if (f.number == 3 && f.wire == k8s::protobuf::wire_bytes && !f.bytes.empty())
        e.message = std::string(f.bytes);
      else if (f.number == 4 && f.wire == k8s::protobuf::wire_bytes && !f.bytes.empty())
        e.reason = std::string(f.bytes);
      else if (f.number == 6 && f.wire == k8s::protobuf::wire_varint && k8s::protobuf::as_int32(f) > 0)
        e.code = k8s::protobuf::as_int32(f);
      return true;
    });
    if (!e.message.empty()) return e;
    text = {}; // binary: not a message to show
  }
  if (!e.message.empty()) return e;
  if (!text.empty()) {
    constexpr std::size_t max_len = 512;
    e.message = std::string(text.substr(0, max_len));
    if (text.size() > max_len) e.message += "...";
    return e;
  }
  e.message = std::to_string(status);
  if (!reason_phrase.empty()) {
    e.message += ' ';
    e.message += reason_phrase;
  }
  return e;
}

} // namespace kozmo::client
