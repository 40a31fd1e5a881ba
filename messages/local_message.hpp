// Messages that never leave the process (requests with callbacks, shared immutable objects)
// need no serialisation, only a name CAF can print: KOZMO_LOCAL_MESSAGE(type) gives `type`
// that inspect overload. Use it in the namespace of the type.
#pragma once

#include <caf/meta/type_name.hpp>

#define KOZMO_LOCAL_MESSAGE(type)                                                                                   \
  template <class Inspector>                                                                                         \
  typename Inspector::result_type inspect(Inspector& f, type&) {                                                    \
    return f(caf::meta::type_name(#type));                                                                           \
  }
