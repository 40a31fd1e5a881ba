// Clusters shared by the scheduler's unit tests.
#pragma once

namespace kozmo::scheduler::test {

// The reference's V100 example: rack -> node -> socket -> switch -> 2 GPUs;
// racks {0.0.0.1, 0.0.0.2} and {0.0.0.3, 0.0.0.4}.
inline constexpr const char* v100_cluster = R"(
physicalCluster:
  cellTypes:
    V100-SWITCH: {childCellType: V100, childCellNumber: 2}
    V100-SOCKET: {childCellType: V100-SWITCH, childCellNumber: 2}
    V100-NODE: {childCellType: V100-SOCKET, childCellNumber: 2, isNodeLevel: true}
    V100-RACK: {childCellType: V100-NODE, childCellNumber: 2}
  physicalCells:
  - cellType: V100-RACK
    cellChildren: [{cellAddress: 0.0.0.1}, {cellAddress: 0.0.0.2}]
  - cellType: V100-RACK
    cellChildren: [{cellAddress: 0.0.0.3}, {cellAddress: 0.0.0.4}]
)";

} // namespace kozmo::scheduler::test
