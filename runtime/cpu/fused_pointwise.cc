// CPU kernel of FusedPointwise (Note [pointwise programs], runtime/ir/pointwise_program.h).
//
// The output is cut into blocks of kBlock contiguous elements, spread over OpenMP threads. Per
// block each leaf becomes a register of kBlock floats — the input itself when the leaf has the
// output's shape, a block filled once per thread for a scalar, else gathered run by run (a leaf's
// dims are collapsed first, so a per-channel [1, C, 1, 1] leaf is C runs of H·W equal values and
// the concat leaf copies contiguous runs of its pieces). Then every instruction is one tight loop
// over the block (eval_pointwise with the opcode a template constant, so the compiler vectorises
// the simple ones); the last writes the output directly.
//
// Note [hoisted broadcasts]: an instruction whose operands all come from leaves of one shape
// smaller than the output (an SE gate's Sigmoid of [N, 1, 1, C]), or from scalars, gives the same
// value at every output position that reads the same element of that shape. It runs once over
// that shape before the blocks, into a buffer that the blocks then read as a leaf of that shape
// (one of scalars only, a Constant among them, becomes a scalar leaf):
// EfficientNet-B1's 23 SE gates took one logistic per output element before, 9.1 ms at batch 16 on
// the device host where ONNX Runtime's Mul took 3.7 ms (docs/history/PERFORMANCE-2026-12.md).
#include <omp.h>

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "runtime/cpu/cpu_kernel.h"
#include "runtime/ops/fused_pointwise.h"

namespace ucudnn::cpu {

namespace {

using ir::PointwiseOp;

constexpr int64_t kBlock = 256;
constexpr int64_t kParallelThreshold = 16384;

// How one leaf's values for a block of output elements are found.
struct LeafReader {
  // kComputed: a register the blocks compute (an instruction that is not hoisted).
  enum class Kind { kFull, kScalar, kStrided, kConcat, kComputed };
  Kind kind = Kind::kFull;
  const float* data = nullptr;
  // kStrided: the leaf's dims collapsed against the output's, with its strides (0 where broadcast).
  std::vector<int64_t> dims, strides;
  // kConcat: the output viewed as [outer, axis, inner]; piece p covers axis positions
  // [begin[p], begin[p + 1]) and holds [outer, begin[p + 1] - begin[p], inner].
  std::vector<const float*> pieces;
  std::vector<int64_t> begin;
  int64_t axis = 0, inner = 1;
};

// The (dim, stride) pairs of a leaf of shape `leaf` read at each index of `out`, dims of size 1
// dropped and neighbours merged where one stride steps over the other's dim (both broadcast, or
// both contiguous).
LeafReader strided_reader(const float* data, const Shape& leaf, const Shape& out) {
  LeafReader r;
  r.kind = LeafReader::Kind::kStrided;
  r.data = data;
  const std::vector<int64_t> dense = shape_strides(leaf);
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    const int64_t stride = leaf[d] == 1 ? 0 : dense[d];
    if (!r.dims.empty() && r.strides.back() == stride * out[d]) {
      r.dims.back() *= out[d];
      r.strides.back() = stride;
    } else {
      r.dims.push_back(out[d]);
      r.strides.push_back(stride);
    }
  }
  if (r.dims.empty()) {
    r.dims.push_back(1);
    r.strides.push_back(0);
  }
  if (std::all_of(r.strides.begin(), r.strides.end(), [](int64_t s) { return s == 0; }))
    r.kind = LeafReader::Kind::kScalar;
  else if (r.dims.size() == 1 && r.strides[0] == 1)
    r.kind = LeafReader::Kind::kFull;
  return r;
}

LeafReader concat_reader(const PointwiseProgram& program, const KernelArgs& args, const Shape& out) {
  LeafReader r;
  r.kind = LeafReader::Kind::kConcat;
  const auto axis = static_cast<size_t>(program.concat_axis);
  r.axis = out[axis];
  for (size_t d = axis + 1; d < out.size(); ++d) r.inner *= out[d];
  r.begin.push_back(0);
  for (int p = 0; p < program.concat_count; ++p) {
    const Tensor& piece = *args.src[static_cast<size_t>(p)];
    r.pieces.push_back(piece.data<float>());
    r.begin.push_back(r.begin.back() + piece.shape()[axis]);
  }
  return r;
}

// Output elements [start, start + n) of a strided leaf into buf: runs along the innermost dim, whose
// stride is 0 (broadcast) or 1 (a dense leaf's innermost dim that is not 1).
void gather_strided(const LeafReader& r, int64_t start, int64_t n, float* buf) {
  const auto rank = static_cast<int>(r.dims.size());
  int64_t index[ir::kMaxPointwiseRank] = {};
  int64_t offset = 0, rest = start;
  for (int d = rank - 1; d >= 0; --d) {
    index[d] = rest % r.dims[d];
    rest /= r.dims[d];
    offset += index[d] * r.strides[d];
  }
  const int64_t last = r.dims[rank - 1], step = r.strides[rank - 1];
  for (int64_t done = 0; done < n;) {
    const int64_t run = std::min(last - index[rank - 1], n - done);
    const float* src = r.data + offset;
    if (step == 0) std::fill_n(buf + done, run, *src);
    else std::copy_n(src, run, buf + done);
    done += run;
    offset += run * step;
    index[rank - 1] += run;
    for (int d = rank - 1; d > 0 && index[d] == r.dims[d]; --d) {
      offset += r.strides[d - 1] - r.dims[d] * r.strides[d];
      index[d] = 0;
      ++index[d - 1];
    }
  }
}

// Output elements [start, start + n) of the concat leaf: a pointer into one piece when the block
// lies in one contiguous run of it, else the runs copied into buf.
const float* gather_concat(const LeafReader& r, int64_t start, int64_t n, float* buf) {
  for (int64_t done = 0; done < n;) {
    const int64_t i = start + done;
    const int64_t position = (i / r.inner) % r.axis, outer = i / (r.inner * r.axis), within = i % r.inner;
    const auto after = std::upper_bound(r.begin.begin(), r.begin.end(), position);
    const auto p = static_cast<size_t>(after - r.begin.begin() - 1);
    const int64_t size = r.begin[p + 1] - r.begin[p];
    const int64_t run = std::min((r.begin[p + 1] - position) * r.inner - within, n - done);
    const float* src = r.pieces[p] + (outer * size + position - r.begin[p]) * r.inner + within;
    if (run == n) return src;
    std::copy_n(src, run, buf + done);
    done += run;
  }
  return buf;
}

// erf(v) as a rational function of v on [-4, 4] (beyond, erf is ±1 in float), the approximation of
// XLA and Eigen's vectorised erf, odd like erf: within 4e-7 of std::erf (1.3e-7 for |v| <= 0.5), in a
// loop that vectorises, where glibc's erff is a call per element (GELU was a quarter of ConvNeXt's
// time on the CPU). The polynomial runs on every v and the result is chosen after it, so the loop has
// no branch (a clamp first let GCC branch to the constant it gives); a NaN fails the comparison and
// stays NaN, as do the infinite and huge v whose polynomial overflows — those take ±1.
inline float erf_rational(float v) {
  const float x2 = v * v;
  float p = -2.72614225801306e-10f;
  p = p * x2 + 2.77068142495902e-08f;
  p = p * x2 - 2.10102402082508e-06f;
  p = p * x2 - 5.69250639462346e-05f;
  p = p * x2 - 7.34990630326855e-04f;
  p = p * x2 - 2.95459980854025e-03f;
  p = p * x2 - 1.60960333262415e-02f;
  float q = -1.45660718464996e-05f;
  q = q * x2 - 2.13374055278905e-04f;
  q = q * x2 - 1.68282697438203e-03f;
  q = q * x2 - 7.37332916720468e-03f;
  q = q * x2 - 1.42647390514189e-02f;
  const float r = v * p / q;
  return std::fabs(v) > 4.f ? std::copysign(1.f, v) : r;
}

template <int Op>
// dst may be a or b itself (Note [in-place pointwise], runtime/plan/liveness.cc): no __restrict.
void run_instruction(float* dst, const float* a, const float* b, float p0, float p1, int64_t n) {
  constexpr auto op = static_cast<PointwiseOp>(Op);
  // Note [CPU vector forms]: the CPU's forms of the ops eval_pointwise (Note [one formula per op])
  // does not give here. The transcendental ones through Eigen's vectorised exp/tanh/logistic (a
  // scalar expf per element made SiLU cost more than EfficientNet's convolutions on the CPU) and a
  // rational erf: they round differently from eval_pointwise (Elu as exp(x) - 1, Eigen has no
  // vectorised expm1). Relu, HardSigmoid, Clip, Max and Min as comparisons that vectorise, which give
  // fmaxf/fminf's results: where eval_pointwise's Relu and HardSigmoid pass a NaN (and -0) as
  // std::max does, these give 0 (+0), as they always have here — nothing else tells them apart. The
  // rest are eval_pointwise, which vectorises as written.
  using Array = Eigen::Array<float, Eigen::Dynamic, 1>;
  Eigen::Map<Array> y(dst, n);
  const Eigen::Map<const Array> x(a, n);
  if constexpr (op == PointwiseOp::kSigmoid) {
    y = x.logistic();
  } else if constexpr (op == PointwiseOp::kTanh) {
    y = x.tanh();
  } else if constexpr (op == PointwiseOp::kElu) {
    y = (x >= 0.f).select(x, p0 * (x.exp() - 1.f));
  } else if constexpr (op == PointwiseOp::kSqrt) {
    y = x.sqrt();  // sqrtf sets errno: GCC keeps it a call per element
  } else if constexpr (op == PointwiseOp::kErf) {
    for (int64_t j = 0; j < n; ++j) dst[j] = erf_rational(a[j]);
  } else if constexpr (op == PointwiseOp::kExp) {
    y = x.exp();
  } else if constexpr (op == PointwiseOp::kLog) {
    y = x.log();
  } else if constexpr (op == PointwiseOp::kAbs) {
    y = x.abs();
  } else if constexpr (op == PointwiseOp::kSoftplus) {
    y = (x > 0.f).select(x + (-x).exp().log1p(), x.exp().log1p());
  } else if constexpr (op == PointwiseOp::kRelu || op == PointwiseOp::kHardSigmoid ||
                       op == PointwiseOp::kHardSwish || op == PointwiseOp::kClip || op == PointwiseOp::kMax ||
                       op == PointwiseOp::kMin) {
    // fmaxf/fminf stay calls per element (x86 has no vector instruction with their NaN rule), so
    // these are written as comparisons that vectorise and give fmaxf/fminf's results, NaN
    // included: `v > c ? v : c` is fmaxf(v, c) for a c that is not NaN, and so on. (HardSwish and
    // Clip are eval_pointwise's; Relu and HardSigmoid differ on a NaN and -0: Note [CPU vector forms].)
    for (int64_t j = 0; j < n; ++j) {
      const float v = a[j];
      if constexpr (op == PointwiseOp::kRelu) {
        dst[j] = v > 0.f ? v : 0.f;  // fmaxf(v, 0): NaN → 0
      } else if constexpr (op == PointwiseOp::kHardSigmoid || op == PointwiseOp::kHardSwish) {
        float t = op == PointwiseOp::kHardSigmoid ? p0 * v + p1 : v * (1.f / 6.f) + 0.5f;
        t = t < 1.f ? t : 1.f;  // fminf(1, t): NaN → 1
        t = t > 0.f ? t : 0.f;  // fmaxf(0, t)
        dst[j] = op == PointwiseOp::kHardSwish ? v * t : t;
      } else if constexpr (op == PointwiseOp::kClip) {
        const float t = v > p0 ? v : p0;  // fmaxf(v, p0): NaN → p0
        dst[j] = t < p1 ? t : p1;         // fminf(t, p1)
      } else if constexpr (op == PointwiseOp::kMax) {
        dst[j] = v > b[j] || b[j] != b[j] ? v : b[j];  // fmaxf: the other operand where one is NaN
      } else {
        dst[j] = v < b[j] || b[j] != b[j] ? v : b[j];  // fminf
      }
    }
  } else {
    for (int64_t j = 0; j < n; ++j) dst[j] = ir::eval_pointwise(op, a[j], b[j], p0, p1);
  }
}

using InstructionLoop = void (*)(float*, const float*, const float*, float, float, int64_t);

template <size_t... Ops>
constexpr std::array<InstructionLoop, sizeof...(Ops)> instruction_loops(std::index_sequence<Ops...>) {
  return {&run_instruction<static_cast<int>(Ops)>...};
}

constexpr auto kInstructionLoops =
    instruction_loops(std::make_index_sequence<static_cast<size_t>(PointwiseOp::kCount)>());

// What the blocks evaluate: a reader per register (the leaves, then the instructions: kComputed,
// or the reader of a hoisted instruction's buffer), which registers they fetch, and the hoisted
// instructions' values (per instruction; empty where not hoisted), which those readers point into:
// move a plan, never copy it.
struct BlockPlan {
  std::vector<LeafReader> readers;
  std::vector<bool> fetched;  // read by an instruction of the blocks
  std::vector<std::vector<float>> hoisted;
};

// Evaluates the program over blocks [first, last) of the output; scratch: kMaxPointwiseRegisters blocks.
void run_blocks(const PointwiseProgram& program, const BlockPlan& plan, float* dst, int64_t numel, int64_t first,
                int64_t last, float (*scratch)[kBlock]) {
  const float* reg[ir::kMaxPointwiseRegisters];
  const int registers = program.registers();
  for (int r = 0; r < registers; ++r) {
    reg[r] = scratch[r];  // a register no instruction of the blocks reads is still a valid pointer
    if (plan.readers[static_cast<size_t>(r)].kind == LeafReader::Kind::kScalar)
      std::fill_n(scratch[r], kBlock, plan.readers[static_cast<size_t>(r)].data[0]);
  }
  const int count = static_cast<int>(program.code.size());
  for (int64_t block = first; block < last; ++block) {
    const int64_t start = block * kBlock, n = std::min(kBlock, numel - start);
    for (int r = 0; r < registers; ++r) {
      if (!plan.fetched[static_cast<size_t>(r)]) continue;
      const LeafReader& reader = plan.readers[static_cast<size_t>(r)];
      switch (reader.kind) {
        case LeafReader::Kind::kFull: reg[r] = reader.data + start; break;
        case LeafReader::Kind::kScalar: reg[r] = scratch[r]; break;
        case LeafReader::Kind::kStrided: gather_strided(reader, start, n, scratch[r]); reg[r] = scratch[r]; break;
        case LeafReader::Kind::kConcat: reg[r] = gather_concat(reader, start, n, scratch[r]); break;
        case LeafReader::Kind::kComputed: break;
      }
    }
    for (int i = 0; i < count; ++i) {
      const int r = program.leaves + i;
      if (plan.readers[static_cast<size_t>(r)].kind != LeafReader::Kind::kComputed) continue;  // hoisted
      const PointwiseInstruction& ins = program.code[static_cast<size_t>(i)];
      float* out = i + 1 == count ? dst + start : scratch[r];
      kInstructionLoops[static_cast<size_t>(ins.op)](out, reg[ins.a], reg[ins.b], ins.p0, ins.p1, n);
      reg[r] = out;
    }
  }
}

// The registers an instruction reads.
std::vector<int> operands(const PointwiseInstruction& ins) {
  if (ins.op == PointwiseOp::kConstant) return {};
  if (ir::pointwise_op_is_binary(ins.op)) return {ins.a, ins.b};
  return {ins.a};
}

// Runs the instructions Note [hoisted broadcasts] allows before the blocks, each into a buffer of
// the plan's `hoisted`, and plans the blocks around them.
BlockPlan hoist_broadcasts(const PointwiseProgram& program, std::vector<LeafReader> leaves,
                           const std::vector<Shape>& leaf_shapes, const Shape& out, int threads) {
  const auto registers = static_cast<size_t>(program.registers());
  const auto count = program.code.size();
  BlockPlan plan;
  plan.readers = std::move(leaves);
  plan.readers.resize(registers, LeafReader{.kind = LeafReader::Kind::kComputed});
  plan.fetched.assign(registers, false);
  // Each register's shape where it is one smaller than the output: the index of a leaf of that
  // shape; kFull for the output's shape (or a mix); kAny for a scalar, which goes with any shape.
  constexpr int kAny = -1, kFull = -2;
  std::vector<int> shape_of(registers, kFull);  // an index into leaf_shapes, kAny or kFull
  for (int l = 0; l < program.leaves; ++l) {
    const LeafReader::Kind kind = plan.readers[static_cast<size_t>(l)].kind;
    shape_of[static_cast<size_t>(l)] = kind == LeafReader::Kind::kScalar ? kAny
                                       : kind == LeafReader::Kind::kStrided ? l : kFull;
  }
  auto same = [&](int a, int b) {
    return a == b || (a >= 0 && b >= 0 && leaf_shapes[static_cast<size_t>(a)] == leaf_shapes[static_cast<size_t>(b)]);
  };
  std::vector<std::vector<float>>& hoisted = plan.hoisted;
  hoisted.assign(count, {});
  for (size_t i = 0; i + 1 < count; ++i) {  // the last instruction writes the output: never hoisted
    const PointwiseInstruction& ins = program.code[i];
    int shape = kAny;
    for (int r : operands(ins)) {
      const int s = shape_of[static_cast<size_t>(r)];
      shape = shape == kAny ? s : s == kAny || same(shape, s) ? shape : kFull;
    }
    const size_t reg = static_cast<size_t>(program.leaves) + i;
    shape_of[reg] = shape;
    if (shape == kFull) continue;
    // Scalars only (a Constant, or an op of scalar leaves): one value, read as a scalar leaf.
    const Shape& small = shape == kAny ? Shape{1} : leaf_shapes[static_cast<size_t>(shape)];
    const int64_t m = shape_numel(small);
    // Run here by one thread: worth it where each thread of the blocks would evaluate it as often.
    if (m * threads > shape_numel(out)) {
      shape_of[reg] = kFull;
      continue;
    }
    std::vector<float>& buffer = hoisted[i];
    buffer.resize(static_cast<size_t>(m));
    // An operand over the small shape: the leaf itself (dense), a filled scalar, or a hoisted buffer.
    std::vector<std::vector<float>> filled;
    auto operand = [&](int r) -> const float* {
      const LeafReader& reader = plan.readers[static_cast<size_t>(r)];
      if (reader.kind == LeafReader::Kind::kScalar) {
        filled.emplace_back(static_cast<size_t>(m), reader.data[0]);
        return filled.back().data();
      }
      if (static_cast<size_t>(r) >= static_cast<size_t>(program.leaves))
        return hoisted[static_cast<size_t>(r - program.leaves)].data();
      return reader.data;
    };
    filled.reserve(2);
    const float* a = ins.op == PointwiseOp::kConstant ? buffer.data() : operand(ins.a);  // Constant reads none
    const float* b = ir::pointwise_op_is_binary(ins.op) ? operand(ins.b) : a;
    kInstructionLoops[static_cast<size_t>(ins.op)](buffer.data(), a, b, ins.p0, ins.p1, m);
    plan.readers[reg] = shape == kAny ? LeafReader{.kind = LeafReader::Kind::kScalar, .data = buffer.data()}
                                      : strided_reader(buffer.data(), small, out);
  }
  for (size_t i = 0; i < count; ++i)
    if (plan.readers[static_cast<size_t>(program.leaves) + i].kind == LeafReader::Kind::kComputed)
      for (int r : operands(program.code[i])) plan.fetched[static_cast<size_t>(r)] = true;
  return plan;
}

Status run_fused_pointwise(const KernelArgs& args) {
  const ir::Node& node = args.node;
  const Shape& out = args.dst[0]->shape();
  std::vector<Shape> inputs;
  for (const Tensor* t : args.src) inputs.push_back(t->shape());
  auto program = decode_pointwise_program(node, inputs.size(), static_cast<int64_t>(out.size()));
  if (!program) return program.status().with_context(node.describe());
  std::vector<LeafReader> leaves;
  for (int l = 0; l < program->leaves; ++l) {
    if (l == 0 && program->concat_count > 0) {
      leaves.push_back(concat_reader(*program, args, out));
      continue;
    }
    const Tensor& leaf = *args.src[program->input_of_leaf(l)];
    leaves.push_back(strided_reader(leaf.data<float>(), leaf.shape(), out));
  }
  std::vector<Shape> leaf_shapes;
  for (int l = 0; l < program->leaves; ++l)
    leaf_shapes.push_back(l == 0 && program->concat_count > 0 ? out : args.src[program->input_of_leaf(l)]->shape());
  const int64_t numel = args.dst[0]->numel();
  const int block_threads = numel > kParallelThreshold ? omp_get_max_threads() : 1;
  const BlockPlan plan = hoist_broadcasts(*program, std::move(leaves), leaf_shapes, out, block_threads);
  float* dst = args.dst[0]->data<float>();
  const int64_t blocks = (numel + kBlock - 1) / kBlock;
#pragma omp parallel if (numel > kParallelThreshold)
  {
    alignas(64) float scratch[ir::kMaxPointwiseRegisters][kBlock];
    const int threads = omp_get_num_threads(), thread = omp_get_thread_num();
    const int64_t first = blocks * thread / threads, last = blocks * (thread + 1) / threads;
    run_blocks(*program, plan, dst, numel, first, last, scratch);
  }
  return Status::ok();
}

}  // namespace

const CpuKernel& cpu_kernel_FusedPointwise() {
  static const CpuKernel k{.run = run_fused_pointwise};
  return k;
}

}  // namespace ucudnn::cpu
