#include "ui/ui_assets.hpp"

namespace kozmo::ui {

answer serve(std::string_view method, std::string_view path) {
  if (method != "GET" && method != "HEAD")
    return {405, "the cell map page answers GET only\n"};
  constexpr std::string_view prefix = "/ui/";
  if (path.substr(0, prefix.size()) != prefix)
    return {404, "not found\n"};
  std::string_view name = path.substr(prefix.size());
  if (name.empty())
    name = "index.html";
  for (const auto& a : assets())
    if (a.name == name)
      return {200, a.body, a.content_type};
  return {404, "no such file of the cell map page\n"};
}

} // namespace kozmo::ui
