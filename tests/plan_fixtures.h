// Device descriptions and shapes the CPU planner tests share (test_planners.cpp,
// test_wgmma_plans.cpp, test_strips_plans.cpp): a 132-SM H100 SXM and a 108-SM A100, and shapes
// from 1x1x1 to 16384^3.
#pragma once

#include <vector>

#include "registry/registry.h"

namespace gemmlab {
namespace {

const DeviceDesc kH100{132, 228 * 1024};
const DeviceDesc kA100{108, 164 * 1024};

struct Dims {
  int m, n, k;
};
std::vector<Dims> shapes() {
  std::vector<Dims> s = {{1, 1, 1},          {7, 13, 5},         {64, 64, 64},
                         {127, 255, 17},     {128, 256, 16},     {1000, 1025, 999},
                         {1023, 1023, 1023}, {1024, 1024, 1024}, {1025, 1025, 1025},
                         {1024, 1024, 4096}, {256, 256, 65536},  {2500, 2500, 1024},
                         {3000, 3000, 3000}, {4097, 31, 2049},   {31, 4097, 67},
                         {4096, 4096, 4096}, {4097, 4097, 4097}, {5000, 5000, 5000},
                         {8192, 8192, 8192}, {1, 16384, 16384},  {16384, 1, 16384},
                         {16384, 16384, 16384}};
  return s;
}

GemmProblem problem(const Dims& d, Op a = Op::N, Op b = Op::N) {
  GemmProblem p;
  p.m = d.m, p.n = d.n, p.k = d.k, p.op_a = a, p.op_b = b;
  return p;
}

}  // namespace
}  // namespace gemmlab
