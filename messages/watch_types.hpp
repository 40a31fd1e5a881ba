// The watch vocabulary shared by the watch actor's core, its messages and its subscribers.
// Plain enums, no CAF: pure cores may include this.
#pragma once

namespace kozmo::watch {

enum class event_type { added, modified, deleted };

inline const char* to_string(event_type t) {
  switch (t) {
  case event_type::added: return "ADDED";
  case event_type::modified: return "MODIFIED";
  case event_type::deleted: return "DELETED";
  }
  return "?";
}

// What subscribers can select on, besides "everything".
enum class index_kind { all, owner_uid, label, node_name, scheduler_name, name_space };

} // namespace kozmo::watch
