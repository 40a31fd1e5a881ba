#pragma once
namespace kozmo::runtime {
inline constexpr const char* version = "0.1.0";
}
