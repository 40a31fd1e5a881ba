// `kozmo crds`: Kozmo's CRDs as JSON, optionally with full pod-template schemas.
#include "runtime/crd_schema.hpp"
#include "runtime/crds.hpp"
#include "runtime/local_mode.hpp"

#include "k8s/json/yaml.hpp"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

namespace kozmo::runtime {

int run_crds(const crds_options& opts) {
  json::value openapi;
  if (!opts.pod_schema.empty()) {
    std::ifstream in(opts.pod_schema, std::ios::binary);
    if (!in) {
      std::cerr << "kozmo crds: cannot read " << opts.pod_schema << "\n";
      return 1;
    }
    std::stringstream text;
    text << in.rdbuf();
    auto parsed = json::parse(text.str());
    if (!parsed) {
      std::cerr << "kozmo crds: " << opts.pod_schema << ": " << parsed.err().message << "\n";
      return 1;
    }
    openapi = std::move(*parsed);
  }
  json::array items;
  std::vector<std::string> known;
  for (const auto& file : embedded_crds()) {
    auto docs = json::parse_yaml_documents(file.text);
    if (!docs) {
      std::cerr << "kozmo crds: " << file.name << ": " << docs.err().message << "\n";
      return 1;
    }
    for (auto& crd : *docs) {
      std::string kind = crd.at_path({"spec", "names", "kind"}) ? crd.at_path({"spec", "names", "kind"})->as_string() : "";
      known.push_back(kind);
      if (!opts.kinds.empty() && std::find(opts.kinds.begin(), opts.kinds.end(), kind) == opts.kinds.end())
        continue;
      if (!openapi.is_null()) {
        auto full = with_full_pod_schema(crd, openapi);
        if (!full) {
          std::cerr << "kozmo crds: " << kind << ": " << full.err().message << "\n";
          return 1;
        }
        crd = std::move(*full);
      }
      items.push_back(std::move(crd));
    }
  }
  for (const auto& k : opts.kinds)
    if (std::find(known.begin(), known.end(), k) == known.end()) {
      std::string list;
      for (const auto& n : known)
        list += (list.empty() ? "" : ", ") + n;
      std::cerr << "kozmo crds: no CRD for kind " << k << " (Kozmo's kinds: " << list << ")\n";
      return 1;
    }
  if (items.size() == 1)
    std::cout << json::dump_pretty(items.front()) << "\n";
  else
    std::cout << json::dump_pretty(json::object{{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}})
              << "\n";
  return 0;
}

} // namespace kozmo::runtime
