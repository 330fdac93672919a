// runtime/core/fnv1a.h: the published FNV-1a 64 test vectors, and the legacy basis pinned to what the
// code before the one helper computed (Note [legacy fnv1a basis]: saved plans and cached kernels match).
#include <gtest/gtest.h>

#include "runtime/core/fnv1a.h"

namespace ucudnn {
namespace {

TEST(Fnv1a, PublishedTestVectors) {
  EXPECT_EQ(fnv1a(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a("foobar"), 0x85944171f73967e8ull);
}

TEST(Fnv1a, PiecesEqualTheWhole) {
  Fnv1a h;
  h.add("foo");
  h.add("bar", 3);
  EXPECT_EQ(h.hash, fnv1a("foobar"));
  EXPECT_EQ(fnv1a_step(fnv1a("fooba"), 'r'), fnv1a("foobar"));
}

// Values of the loop `h = (h ^ c) * 1099511628211` from 1469598103934665603, as plans' fingerprints and
// the generated kernels' cache names were computed before runtime/core/fnv1a.h.
TEST(Fnv1a, LegacyBasisKeepsEarlierValues) {
  EXPECT_EQ(fnv1a("", kLegacyFnv1aBasis), 0x14650fb0739d0383ull);
  EXPECT_EQ(fnv1a("a", kLegacyFnv1aBasis), 0x44bd8ad473cd9906ull);
  EXPECT_EQ(fnv1a("pointwise kernel", kLegacyFnv1aBasis), 0x89657ea22b178344ull);
}

}  // namespace
}  // namespace ucudnn
