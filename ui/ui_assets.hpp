// The cell map page (ui/index.html, cellmap.js, cellmap.css), built into the binary, and how a
// request for it is answered. Pure: both servers that carry the page (the embedded API server
// in `kozmo local`, the inspect address of `kozmo controller`) call serve().
//
//   GET /ui/               index.html
//   GET /ui/cellmap.js     (any file of the page by name)
//   anything else under /ui/: 404; a method other than GET or HEAD: 405
//
// The files hold no data (the page reads inspect and the Kubernetes API with the caller's
// credential), so the servers hand them out without one: a browser cannot send a bearer token
// on navigation.
#pragma once

#include <string_view>
#include <vector>

namespace kozmo::ui {

struct asset {
  std::string_view name; // "index.html"
  std::string_view content_type;
  std::string_view body;
};

const std::vector<asset>& assets();

struct answer {
  int status = 200;
  std::string_view body;
  std::string_view content_type = "text/plain; charset=utf-8";
};

// `path` without the query string.
answer serve(std::string_view method, std::string_view path);

} // namespace kozmo::ui
