// The one translation unit that compiles Catch2's runner (11 s on its own; built once).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
