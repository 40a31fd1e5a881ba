// Atom constants of Kozmo's actors (CAF 0.17: names of at most 10 characters). caf:: already
// has get_atom, put_atom, ok_atom, tick_atom, ...: do not redefine those.
#pragma once

#include <caf/atom.hpp>

namespace kozmo::atoms {

using subscribe_atom = caf::atom_constant<caf::atom("subscribe")>;
using synced_atom = caf::atom_constant<caf::atom("synced")>;
using relist_atom = caf::atom_constant<caf::atom("relist")>;
using rewatch_atom = caf::atom_constant<caf::atom("rewatch")>;
using stats_atom = caf::atom_constant<caf::atom("stats")>;
using heartbeat_atom = caf::atom_constant<caf::atom("heartbeat")>;
using advance_atom = caf::atom_constant<caf::atom("advance")>;
using retry_atom = caf::atom_constant<caf::atom("retry")>;
using register_atom = caf::atom_constant<caf::atom("register")>;
using renew_atom = caf::atom_constant<caf::atom("renew")>;
using written_atom = caf::atom_constant<caf::atom("written")>;
using flush_atom = caf::atom_constant<caf::atom("flush")>;
using release_atom = caf::atom_constant<caf::atom("release")>;
using reconfigure_atom = caf::atom_constant<caf::atom("reconfig")>;

} // namespace kozmo::atoms
