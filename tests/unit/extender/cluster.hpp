// The cluster both extender test files schedule on.
#pragma once

namespace kozmo::extender::test {

// Two 4-GPU nodes, one virtual cluster owning both.
inline constexpr const char* cluster_yaml = R"(
physicalCluster:
  cellTypes:
    K80-NODE: {childCellType: K80, childCellNumber: 4, isNodeLevel: true}
  physicalCells:
  - {cellType: K80-NODE, cellAddress: node-a}
  - {cellType: K80-NODE, cellAddress: node-b}
virtualClusters:
  vc1:
    virtualCells: [{cellType: K80-NODE, cellNumber: 2}]
)";

} // namespace kozmo::extender::test
