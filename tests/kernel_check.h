// The every-kernel check the GPU tests share: a problem case (shape, transposes, padded rows,
// beta), every registered kernel (or one) run on it against the fp64 reference, element by element
// against the size of its own products, the padding columns of C untouched.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>

#include "registry/registry.h"

namespace gemmlab::test {

struct Shape {
  int64_t m, n, k;
};

struct Case {
  Precision precision;
  Shape shape;
  Op op_a, op_b;
  int pad;          // extra elements per row of A, B and C (3 breaks 16-byte row alignment);
                    // with pad > 0 the matrices also start one element past a 256-byte boundary
  bool beta_zero;   // beta = 0 with C poisoned by NaN, else beta != 0 with random C
};

std::string case_name(const Case& c);
// gtest prints parameters by this name (readable ctest lines).
void PrintTo(const Case& c, std::ostream* os);

// Runs every registered kernel supporting c.precision (or only the one named `only`) on case c and
// checks each against the fp64 reference; *ran_out counts the kernels run.
void check_case(const Case& c, const char* only, int* ran_out);

// Runs the one kernel `name` on case c against fp64; it must have run.
void check_kernel(const Case& c, const char* name);

// Every plan variant kernel `name` offers for case c (KernelDesc::variants: what gemm-tune may
// pick), each run on c under its ForcePlan and checked like check_kernel; returns their count.
int check_every_variant(const Case& c, const char* name);
// check_every_variant over each case, expecting at least min_each variants of each (what
// `expect` names: "slice counts", ...); prints the total on a NOTE line.
void check_variants_of_cases(std::initializer_list<Case> cases, const char* name, int min_each,
                             const char* what);

// The grid kernel `name` would launch for an m x n x k NN problem with tight leading dimensions
// (pointers only matter for their alignment), or 0 where the device is not an H100 SXM (132 SMs),
// the only one whose grids the tests pin down.
unsigned h100_grid(const char* name, Precision prec, int64_t m, int64_t n, int64_t k);

}  // namespace gemmlab::test
