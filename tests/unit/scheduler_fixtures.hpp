// Clusters shared by the scheduler's unit tests.
#pragma once

#include <string>

namespace kozmo::scheduler::test {

// The reference's V100 cell types: rack -> node -> socket -> switch -> 2 GPUs, up to the
// physicalCells key.
inline constexpr const char* v100_types = R"(
physicalCluster:
  cellTypes:
    V100-SWITCH: {childCellType: V100, childCellNumber: 2}
    V100-SOCKET: {childCellType: V100-SWITCH, childCellNumber: 2}
    V100-NODE: {childCellType: V100-SOCKET, childCellNumber: 2, isNodeLevel: true}
    V100-RACK: {childCellType: V100-NODE, childCellNumber: 2}
  physicalCells:
)";

// The reference's V100 example: racks {0.0.0.1, 0.0.0.2} and {0.0.0.3, 0.0.0.4}.
inline const std::string v100_cluster = std::string(v100_types) + R"(  - cellType: V100-RACK
    cellChildren: [{cellAddress: 0.0.0.1}, {cellAddress: 0.0.0.2}]
  - cellType: V100-RACK
    cellChildren: [{cellAddress: 0.0.0.3}, {cellAddress: 0.0.0.4}]
)";

// The same cell types with `racks` racks of two nodes named n1, n2, ... (physicalCluster only).
inline std::string v100_racks(int racks) {
  std::string y = v100_types;
  for (int r = 0; r < racks; ++r)
    y += "  - cellType: V100-RACK\n    cellChildren: [{cellAddress: n" + std::to_string(2 * r + 1) + "}, {cellAddress: n" +
         std::to_string(2 * r + 2) + "}]\n";
  return y;
}

} // namespace kozmo::scheduler::test
