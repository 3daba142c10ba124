//===- Emulator.cpp - GPU kernels interpreted lane by lane on the host ----===//
//
// Each lane of a workgroup is an interpreter context (its block, next operation and value
// map) that runs until it reaches a barrier, a cross-lane operation or its return; the
// scheduler releases a barrier once every lane still running has reached one, and runs a
// cross-lane operation once every running lane of the wave waits at it. Values are kept as
// the bit patterns of their elements (vectors and aggregates flattened), so every integer
// and floating-point operation is computed at its own width and rounding.
//
// Cross-lane semantics follow the vendors' documents, not the compiler's atom table:
//   - rocdl.update.dpp: AMD's DPP_CTRL encodings (quad_perm, row shifts and rotates, wave
//     shifts, row mirrors and broadcasts), row and bank masks, bound_ctrl.
//   - rocdl.ds_bpermute: each lane reads the lane addressed by bits [7:2] of its address.
//   - rocdl.mbcnt.lo/hi: the set bits of the mask below the lane.
//   - nvvm.shfl.sync: PTX's shfl.sync (up, down, bfly, idx; clamp and segment mask).
//   - Buffer loads and stores (raw, offset mode): out-of-range components read 0 and are
//     not written; each 32-bit component is range-checked on its own against num_records.
//
//===----------------------------------------------------------------------===//

#include "wavetile/Emulator.h"

#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <bit>
#include <cmath>
#include <cstring>

using namespace mlir;

namespace wavetile {

struct EmulatedModule::Impl {
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
  ModuleManifest manifest;
  GpuTarget target;
};

} // namespace wavetile

using namespace wavetile;

namespace {

/// A value: the bits of each element (a scalar has one; vectors, structs and arrays are
/// flattened in order). Pointers are addresses (host addresses for global memory, byte
/// offsets for LDS); a buffer resource is {base, stride, num_records, flags}.
using Bits = SmallVector<uint64_t, 4>;

/// Raised by an operation that cannot go on; the launch reports it with the lane.
struct Fault {
  std::string message;
};

[[noreturn]] void fault(const std::string &message) { throw Fault{message}; }

//===----------------------------------------------------------------------===//
// Types and scalar arithmetic
//===----------------------------------------------------------------------===//

/// The scalar types of `type`'s elements, flattened.
void flatten(Type type, SmallVectorImpl<Type> &out) {
  if (auto vector = dyn_cast<VectorType>(type)) {
    out.append(vector.getNumElements(), vector.getElementType());
  } else if (auto array = dyn_cast<LLVM::LLVMArrayType>(type)) {
    for (unsigned i = 0; i < array.getNumElements(); ++i)
      flatten(array.getElementType(), out);
  } else if (auto structType = dyn_cast<LLVM::LLVMStructType>(type)) {
    for (Type field : structType.getBody())
      flatten(field, out);
  } else {
    out.push_back(type);
  }
}

SmallVector<Type> scalarsOf(Type type) {
  SmallVector<Type> out;
  flatten(type, out);
  return out;
}

Type elementOf(Type type) {
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.getElementType();
  return type;
}

std::string typeName(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return s;
}

unsigned widthOf(Type type) {
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.getWidth();
  if (auto flt = dyn_cast<FloatType>(type))
    return flt.getWidth();
  if (isa<LLVM::LLVMPointerType>(type))
    return 64;
  fault("no scalar width for " + typeName(type));
}

uint64_t maskOf(unsigned width) { return width >= 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1; }

int64_t signExtend(uint64_t bits, unsigned width) {
  if (width >= 64)
    return int64_t(bits);
  uint64_t sign = uint64_t(1) << (width - 1);
  return int64_t((bits & maskOf(width)) ^ sign) - int64_t(sign);
}

/// f16, bf16 and f32 travel through float (exact for the two narrow ones), f64 as double.
float toFloat(uint64_t bits, Type type) {
  if (type.isF32())
    return std::bit_cast<float>(uint32_t(bits));
  if (type.isF16())
    return float(std::bit_cast<_Float16>(uint16_t(bits)));
  if (type.isBF16())
    return std::bit_cast<float>(uint32_t(bits) << 16);
  if (type.isF64())
    return float(std::bit_cast<double>(bits));
  fault("floating-point type " + typeName(type) + " is not modelled");
}

double toDouble(uint64_t bits, Type type) {
  return type.isF64() ? std::bit_cast<double>(bits) : double(toFloat(bits, type));
}

/// Rounds `value` to `type` (round to nearest even, NaNs stay NaNs).
uint64_t fromDouble(double value, Type type) {
  if (type.isF64())
    return std::bit_cast<uint64_t>(value);
  float f = float(value);
  if (type.isF32())
    return std::bit_cast<uint32_t>(f);
  if (type.isF16())
    return std::bit_cast<uint16_t>(static_cast<_Float16>(f));
  if (type.isBF16()) {
    uint32_t u = std::bit_cast<uint32_t>(f);
    if (std::isnan(f))
      return (u >> 16) | 0x40;
    return (u + 0x7fff + ((u >> 16) & 1)) >> 16;
  }
  fault("floating-point type " + typeName(type) + " is not modelled");
}

/// A float operation at `type`'s precision: f64 in double, the others in float (a + b,
/// a · b, a / b and sqrt of two f16 or bf16 values round once in float, then exactly
/// once more to the type: the result is the correctly rounded one).
template <typename F> uint64_t floatOp(Type type, F &&op, std::initializer_list<uint64_t> operands) {
  if (type.isF64()) {
    double v[3] = {};
    size_t i = 0;
    for (uint64_t o : operands)
      v[i++] = std::bit_cast<double>(o);
    return std::bit_cast<uint64_t>(double(op(v[0], v[1], v[2])));
  }
  float v[3] = {};
  size_t i = 0;
  for (uint64_t o : operands)
    v[i++] = toFloat(o, type);
  return fromDouble(double(op(v[0], v[1], v[2])), type);
}

/// The narrow float formats of matrix operands (OCP and AMD's FNUZ fp8, fp6, fp4).
enum class SmallFloat { E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, E2M3, E3M2, E2M1 };

/// The value of `code` in `format`: sign, then exponent and mantissa fields. NaN: e4m3fn's
/// S.1111.111, e5m2's exponent of ones with a nonzero mantissa (zero: infinity), and FNUZ's
/// 0x80 (which would be -0); fp6 and fp4 have neither.
double smallFloatValue(uint64_t code, SmallFloat format) {
  struct Layout {
    int bits, mantissaBits, bias;
  };
  static constexpr Layout layouts[] = {{8, 3, 7}, {8, 3, 8}, {8, 2, 15}, {8, 2, 16}, {6, 3, 1}, {6, 2, 3}, {4, 1, 1}};
  const Layout l = layouts[int(format)];
  const uint64_t sign = code >> (l.bits - 1) & 1;
  const int exponent = int(code & ((1u << (l.bits - 1)) - 1)) >> l.mantissaBits;
  const int mantissa = int(code) & ((1 << l.mantissaBits) - 1);
  if ((format == SmallFloat::E4M3FNUZ || format == SmallFloat::E5M2FNUZ) && code == 0x80)
    return std::nan("");
  if (format == SmallFloat::E4M3FN && (code & 0x7f) == 0x7f)
    return std::nan("");
  if (format == SmallFloat::E5M2 && exponent == 31)
    return mantissa ? std::nan("") : sign ? -INFINITY : INFINITY;
  const double fraction = double(mantissa) / (1 << l.mantissaBits);
  const double magnitude = exponent ? std::ldexp(1 + fraction, exponent - l.bias) : std::ldexp(fraction, 1 - l.bias);
  return sign ? -magnitude : magnitude;
}

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

enum class LaneState { Running, AtBarrier, AtCrossLane, Done };

/// An asynchronous copy into LDS (cp.async): its source is read when it is issued, its
/// destination written when a wait retires its group, so a read of the destination before
/// the wait sees the old bytes, as on the hardware.
struct PendingCopy {
  uint64_t ldsOffset;
  std::vector<uint8_t> bytes;
};

struct Lane {
  uint32_t thread = 0; // linear index in the workgroup
  std::array<uint32_t, 3> tid{};
  Block *block = nullptr;
  Block::iterator next;
  DenseMap<Value, Bits> values;
  LaneState state = LaneState::Running;
  std::vector<PendingCopy> openGroup;              // issued, not yet committed
  std::vector<std::vector<PendingCopy>> committed; // oldest first
  uint32_t wgmmaGroups = 0;                        // wgmma groups committed
  uint32_t wgmmaGroupsDone = 0;                    // of those, the ones a wait has retired
};

/// Shared bytes [begin, end) that a warpgroup's wgmma of commit group `group` reads. The
/// product is computed when issued here, but on the hardware the reads may happen until a
/// wait retires the group in every thread: a write to those bytes before then is a race.
struct WarpgroupRead {
  uint32_t warpgroup, group;
  uint64_t begin, end;
};

/// What running one operation did to its lane.
enum class Step { Next, Jumped, Barrier, CrossLane, Return };

struct Allocation {
  uint64_t begin, end;
  std::string name;
};

class Workgroup {
public:
  Workgroup(LLVM::LLVMFuncOp func, const GpuTarget &target, const KernelManifest &kernel, std::array<uint32_t, 3> group,
            std::array<uint32_t, 3> grid, const std::vector<Bits> &params, const std::vector<Allocation> &regions,
            const DenseMap<Operation *, uint64_t> &ldsOffsets, uint64_t ldsBytes)
      : func(func), target(target), kernel(kernel), group(group), grid(grid), regions(regions), ldsOffsets(ldsOffsets),
        lds(ldsBytes, 0), copyTargets(ldsBytes, 0), layout(DataLayout::closest(func)) {
    const uint32_t threads = kernel.block[0] * kernel.block[1] * kernel.block[2];
    lanes.resize(threads);
    Block &entry = func.getBody().front();
    for (uint32_t t = 0; t < threads; ++t) {
      Lane &lane = lanes[t];
      lane.thread = t;
      lane.tid = {t % kernel.block[0], t / kernel.block[0] % kernel.block[1], t / (kernel.block[0] * kernel.block[1])};
      lane.block = &entry;
      lane.next = entry.begin();
      for (auto [arg, value] : llvm::zip(entry.getArguments(), params))
        lane.values[arg] = value;
    }
  }

  /// Runs every lane to its return; throws Fault naming the lane on a failure.
  void run() {
    const uint32_t wave = uint32_t(target.waveSize);
    for (;;) {
      bool progress = false;
      for (Lane &lane : lanes)
        if (lane.state == LaneState::Running) {
          runLane(lane);
          progress = true;
        }
      // Cross-lane operations: once every running lane of a wave waits at the same one.
      for (uint32_t first = 0; first < lanes.size(); first += wave) {
        uint32_t last = std::min<uint32_t>(first + wave, lanes.size());
        Operation *op = nullptr;
        bool ready = true, any = false;
        for (uint32_t t = first; t < last; ++t) {
          const Lane &lane = lanes[t];
          if (lane.state == LaneState::Done)
            continue;
          if (lane.state != LaneState::AtCrossLane || (op && &*lane.next != op)) {
            ready = false;
            break;
          }
          op = &*lane.next;
          any = true;
        }
        if (ready && any && !isWarpgroupOp(op)) {
          crossLane(op, first, last);
          progress = true;
        }
      }
      // Warpgroup operations (wgmma): once all 128 threads of four consecutive warps wait
      // at the same one.
      for (uint32_t first = 0; first + kWarpgroupThreads <= lanes.size(); first += kWarpgroupThreads) {
        Operation *op = &*lanes[first].next;
        bool ready = lanes[first].state == LaneState::AtCrossLane && isWarpgroupOp(op);
        for (uint32_t t = first; ready && t < first + kWarpgroupThreads; ++t)
          ready = lanes[t].state == LaneState::AtCrossLane && &*lanes[t].next == op;
        if (ready) {
          crossLane(op, first, first + kWarpgroupThreads);
          progress = true;
        }
      }
      bool allDone = true, allAtBarrier = true;
      for (const Lane &lane : lanes) {
        allDone &= lane.state == LaneState::Done;
        allAtBarrier &= lane.state == LaneState::Done || lane.state == LaneState::AtBarrier;
      }
      if (allDone)
        return;
      if (allAtBarrier) {
        for (Lane &lane : lanes)
          if (lane.state == LaneState::AtBarrier) {
            lane.state = LaneState::Running;
            ++lane.next;
          }
        continue;
      }
      if (!progress)
        deadlock();
    }
  }

private:
  [[noreturn]] void deadlock() {
    std::string states;
    for (const Lane &lane : lanes)
      if (lane.state != LaneState::Done && states.size() < 400)
        states += " thread " + std::to_string(lane.thread) + " waits at " + describe(&*lane.next) + ";";
    fault("deadlock: lanes wait at different barriers or cross-lane operations:" + states);
  }

  /// The operation and the kernel source line it came from (the DSL's locations survive
  /// lowering).
  static std::string describe(Operation *op) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << op->getName() << " at ";
    if (auto file = dyn_cast<FileLineColLoc>(op->getLoc()))
      os << file.getFilename().getValue() << ":" << file.getLine() << ":" << file.getColumn();
    else
      os << op->getLoc();
    return text;
  }

  void runLane(Lane &lane) {
    while (lane.state == LaneState::Running) {
      Operation *op = &*lane.next;
      Step step;
      try {
        step = execute(lane, op);
      } catch (Fault &f) {
        f.message = "thread " + std::to_string(lane.thread) + " (" + (target.isAMD() ? "wave " : "warp ") +
                    std::to_string(lane.thread / target.waveSize) + ", lane " +
                    std::to_string(lane.thread % target.waveSize) + "): " + f.message + " (" + describe(op) + ")";
        throw;
      }
      switch (step) {
      case Step::Next:
        ++lane.next;
        break;
      case Step::Jumped:
        break;
      case Step::Barrier:
        lane.state = LaneState::AtBarrier;
        break;
      case Step::CrossLane:
        lane.state = LaneState::AtCrossLane;
        break;
      case Step::Return:
        lane.state = LaneState::Done;
        lane.values.clear();
        break;
      }
    }
  }

  const Bits &get(Lane &lane, Value v) {
    auto it = lane.values.find(v);
    if (it != lane.values.end())
      return it->second;
    // Constants and other side-effect-free ops defined outside the running block order
    // (none in practice) would be missing here.
    fault("value used before it was computed");
  }

  uint64_t scalar(Lane &lane, Value v) { return get(lane, v)[0]; }

  void set(Lane &lane, Value v, Bits bits) { lane.values[v] = std::move(bits); }

  void branch(Lane &lane, Block *dest, ValueRange operands) {
    SmallVector<Bits> incoming;
    for (Value v : operands)
      incoming.push_back(get(lane, v));
    for (auto [arg, bits] : llvm::zip(dest->getArguments(), incoming))
      lane.values[arg] = std::move(bits);
    lane.block = dest;
    lane.next = dest->begin();
  }

  uint64_t sizeOf(Type type) { return layout.getTypeSize(type); }

  //===--------------------------------------------------------------------===//
  // Memory
  //===--------------------------------------------------------------------===//

  /// The host bytes of a global access, which must lie in one argument buffer.
  uint8_t *global(uint64_t address, uint64_t bytes, const char *what) {
    for (const Allocation &r : regions)
      if (address >= r.begin && address + bytes <= r.end)
        return reinterpret_cast<uint8_t *>(address);
    char text[160];
    std::snprintf(text, sizeof(text), "%s of %llu bytes at 0x%llx is outside every argument buffer", what,
                  (unsigned long long)bytes, (unsigned long long)address);
    std::string message = text;
    for (const Allocation &r : regions)
      if (address < r.end + 4096 && address + bytes > (r.begin > 4096 ? r.begin - 4096 : 0)) {
        std::snprintf(text, sizeof(text), " ('%s' spans 0x%llx..0x%llx)", r.name.c_str(), (unsigned long long)r.begin,
                      (unsigned long long)r.end);
        message += text;
      }
    fault(message);
  }

  /// A wait that leaves at most `pending` of the lane's wgmma groups in flight.
  void retireWarpgroupGroups(Lane &lane, uint64_t pending) {
    if (lane.wgmmaGroups > pending)
      lane.wgmmaGroupsDone = std::max<uint32_t>(lane.wgmmaGroupsDone, lane.wgmmaGroups - uint32_t(pending));
  }

  /// Whether some thread of the read's warpgroup has not retired its group yet.
  bool inFlight(const WarpgroupRead &read) const {
    for (uint32_t t = read.warpgroup * kWarpgroupThreads; t < (read.warpgroup + 1) * kWarpgroupThreads; ++t)
      if (t < lanes.size() && lanes[t].state != LaneState::Done && lanes[t].wgmmaGroupsDone <= read.group)
        return true;
    return false;
  }

  void checkSharedWrite(uint64_t offset, uint64_t bytes, const char *what) {
    llvm::erase_if(warpgroupReads, [&](const WarpgroupRead &r) { return !inFlight(r); });
    for (const WarpgroupRead &r : warpgroupReads)
      if (offset < r.end && r.begin < offset + bytes)
        fault(std::string(what) + " writes LDS bytes [" + std::to_string(offset) + ", " +
              std::to_string(offset + bytes) + ") while warpgroup " + std::to_string(r.warpgroup) +
              "'s wgmma that reads [" + std::to_string(r.begin) + ", " + std::to_string(r.end) +
              ") is in flight (no wait has retired its group in every thread)");
  }

  /// The LDS bytes a read takes. A read of bytes an issued cp.async may still be writing
  /// sees old or new bytes on the hardware (here always the old ones): a race.
  const uint8_t *sharedRead(uint64_t offset, uint64_t bytes, const char *what) {
    const uint8_t *at = shared(offset, bytes, what);
    for (uint64_t i = offset; i < offset + bytes; ++i)
      if (copyTargets[i])
        fault(std::string(what) + " reads LDS byte " + std::to_string(i) +
              ", which an issued cp.async may still be writing (its group not waited for)");
    return at;
  }

  uint8_t *shared(uint64_t offset, uint64_t bytes, const char *what) {
    if (offset + bytes > lds.size() || offset + bytes < offset)
      fault(std::string(what) + " of " + std::to_string(bytes) + " bytes at LDS offset " + std::to_string(offset) +
            " is past the workgroup's " + std::to_string(lds.size()) + " bytes");
    return lds.data() + offset;
  }

  uint8_t *memory(Type pointer, uint64_t address, uint64_t bytes, const char *what) {
    unsigned space = cast<LLVM::LLVMPointerType>(pointer).getAddressSpace();
    if (space == 3)
      return shared(address, bytes, what);
    if (space == 1 || space == 0)
      return global(address, bytes, what);
    fault("address space " + std::to_string(space) + " is not modelled");
  }

  /// Elements of `type` from bytes: little endian, consecutive elements at consecutive
  /// bits, as LLVM lays out vectors (a vector<2xi4> is one byte, element 0 in bits 0-3).
  /// Scalars narrower than a byte (i1) occupy a whole byte.
  Bits unpack(const uint8_t *bytes, Type type) {
    Bits out;
    SmallVector<Type> scalars = scalarsOf(type);
    uint64_t bit = 0;
    for (Type t : scalars) {
      unsigned width = widthOf(t);
      uint64_t v = 0;
      for (unsigned i = 0; i < width; ++i, ++bit)
        v |= uint64_t((bytes[bit / 8] >> (bit % 8)) & 1) << i;
      out.push_back(v);
      if (scalars.size() == 1)
        break;
    }
    return out;
  }

  void pack(const Bits &value, Type type, uint8_t *bytes) {
    uint64_t bit = 0;
    SmallVector<Type> scalars = scalarsOf(type);
    for (auto [t, v] : llvm::zip(scalars, value)) {
      unsigned width = widthOf(t);
      if (scalars.size() == 1)
        width = (width + 7) / 8 * 8; // a lone i1 is stored as a zero-extended byte
      for (unsigned i = 0; i < width; ++i, ++bit) {
        uint8_t mask = uint8_t(1u << (bit % 8));
        bytes[bit / 8] = ((v >> i) & 1) ? (bytes[bit / 8] | mask) : (bytes[bit / 8] & ~mask);
      }
    }
  }

  /// Raw buffer access (offset mode): the components in range of num_records, 32 bits
  /// each (narrower accesses as one component); the others read 0 or are not written.
  void bufferAccess(const Bits &resource, uint64_t voffset, uint64_t soffset, Type type, Bits *load,
                    const Bits *store) {
    const uint64_t base = resource[0], records = resource[2];
    const uint64_t bytes = sizeOf(type);
    const uint64_t offset = std::min<uint64_t>(uint64_t(uint32_t(voffset)) + uint32_t(soffset), 0xffffffffu);
    std::vector<uint8_t> data(bytes, 0);
    if (store)
      pack(*store, type, data.data());
    const uint64_t component = bytes < 4 ? bytes : 4;
    for (uint64_t at = 0; at < bytes; at += component) {
      if (offset + at + component > records)
        continue; // out of range: reads 0, writes dropped
      uint8_t *host = global(base + offset + at, component, load ? "buffer load" : "buffer store");
      if (load)
        std::memcpy(data.data() + at, host, component);
      else
        std::memcpy(host, data.data() + at, component);
    }
    if (load)
      *load = unpack(data.data(), type);
  }

  /// The address a getelementptr computes.
  uint64_t elementAddress(Lane &lane, LLVM::GEPOp gep) {
    uint64_t address = scalar(lane, gep.getBase());
    Type current = gep.getElemType();
    bool first = true;
    for (auto index : gep.getIndices()) {
      int64_t i;
      if (auto value = dyn_cast<Value>(index))
        i = signExtend(scalar(lane, value), widthOf(value.getType()));
      else
        i = cast<IntegerAttr>(index).getInt();
      if (first) {
        address += uint64_t(i) * sizeOf(current);
        first = false;
      } else if (auto array = dyn_cast<LLVM::LLVMArrayType>(current)) {
        current = array.getElementType();
        address += uint64_t(i) * sizeOf(current);
      } else if (auto vector = dyn_cast<VectorType>(current)) {
        current = vector.getElementType();
        address += uint64_t(i) * sizeOf(current);
      } else if (auto structType = dyn_cast<LLVM::LLVMStructType>(current)) {
        uint64_t offset = 0;
        for (int64_t f = 0; f <= i; ++f) {
          Type field = structType.getBody()[f];
          uint64_t align = structType.isPacked() ? 1 : layout.getTypeABIAlignment(field);
          offset = (offset + align - 1) / align * align;
          if (f < i)
            offset += sizeOf(field);
        }
        address += offset;
        current = structType.getBody()[i];
      } else {
        fault("getelementptr into " + typeName(current) + " is not modelled");
      }
    }
    return address;
  }

  //===--------------------------------------------------------------------===//
  // One operation of one lane
  //===--------------------------------------------------------------------===//

  Bits constantBits(Attribute attr, Type type) {
    Bits out;
    SmallVector<Type> scalars = scalarsOf(type);
    auto one = [&](Attribute a, Type t) -> uint64_t {
      if (auto i = dyn_cast<IntegerAttr>(a))
        return i.getValue().getZExtValue() & maskOf(widthOf(t));
      if (auto f = dyn_cast<FloatAttr>(a))
        return f.getValue().bitcastToAPInt().getZExtValue();
      fault("constant " + typeName(t) + " is not modelled");
    };
    if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
      for (Attribute a : dense.getValues<Attribute>())
        out.push_back(one(a, scalars[out.size()]));
    } else {
      out.push_back(one(attr, scalars[0]));
    }
    return out;
  }

  /// Applies `f` to each element of the operands (all of one shape).
  template <typename F> Bits elementwise(Lane &lane, Operation *op, F &&f) {
    SmallVector<const Bits *> operands;
    for (Value v : op->getOperands())
      operands.push_back(&get(lane, v));
    Bits out(get(lane, op->getOperand(0)).size());
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = f(i, operands);
    return out;
  }

  Bits integerBinary(Lane &lane, Operation *op) {
    Type type = elementOf(op->getResult(0).getType());
    unsigned w = widthOf(type);
    StringRef name = op->getName().getStringRef();
    return elementwise(lane, op, [&](size_t i, auto &ops) -> uint64_t {
      uint64_t a = (*ops[0])[i] & maskOf(w), b = (*ops[1])[i] & maskOf(w);
      int64_t sa = signExtend(a, w), sb = signExtend(b, w);
      uint64_t r;
      if (name == "llvm.add")
        r = a + b;
      else if (name == "llvm.sub")
        r = a - b;
      else if (name == "llvm.mul")
        r = a * b;
      else if (name == "llvm.and")
        r = a & b;
      else if (name == "llvm.or")
        r = a | b;
      else if (name == "llvm.xor")
        r = a ^ b;
      else if (name == "llvm.shl")
        r = b >= w ? 0 : a << b;
      else if (name == "llvm.lshr")
        r = b >= w ? 0 : a >> b;
      else if (name == "llvm.ashr")
        r = uint64_t(b >= w ? (sa < 0 ? -1 : 0) : sa >> b);
      else {
        if (b == 0)
          fault("integer division by zero");
        if (name == "llvm.udiv")
          r = a / b;
        else if (name == "llvm.urem")
          r = a % b;
        else if (name == "llvm.sdiv")
          r = uint64_t(sa / sb);
        else if (name == "llvm.srem")
          r = uint64_t(sa % sb);
        else
          fault("integer operation not modelled");
      }
      return r & maskOf(w);
    });
  }

  Bits floatBinary(Lane &lane, Operation *op) {
    Type type = elementOf(op->getResult(0).getType());
    StringRef name = op->getName().getStringRef();
    return elementwise(lane, op, [&](size_t i, auto &ops) -> uint64_t {
      uint64_t a = (*ops[0])[i], b = (*ops[1])[i];
      auto math = [&](auto x, auto y, auto) -> decltype(x) {
        if (name == "llvm.fadd")
          return x + y;
        if (name == "llvm.fsub")
          return x - y;
        if (name == "llvm.fmul")
          return x * y;
        if (name == "llvm.fdiv")
          return x / y;
        if (name == "llvm.frem")
          return std::fmod(x, y);
        if (name == "llvm.intr.maximum")
          return std::isnan(x) || std::isnan(y) ? x + y : x == y ? (std::signbit(x) ? y : x) : std::max(x, y);
        if (name == "llvm.intr.minimum")
          return std::isnan(x) || std::isnan(y) ? x + y : x == y ? (std::signbit(x) ? x : y) : std::min(x, y);
        if (name == "llvm.intr.maxnum")
          return std::fmax(x, y);
        if (name == "llvm.intr.minnum")
          return std::fmin(x, y);
        if (name == "llvm.intr.copysign")
          return std::copysign(x, y);
        fault("floating-point operation not modelled");
      };
      return floatOp(type, math, {a, b});
    });
  }

  Bits floatUnary(Lane &lane, Operation *op) {
    Type type = elementOf(op->getResult(0).getType());
    StringRef name = op->getName().getStringRef();
    return elementwise(lane, op, [&](size_t i, auto &ops) -> uint64_t {
      auto math = [&](auto x, auto, auto) -> decltype(x) {
        if (name == "llvm.fneg")
          return -x;
        if (name == "llvm.intr.fabs")
          return std::fabs(x);
        if (name == "llvm.intr.sqrt")
          return std::sqrt(x);
        if (name == "llvm.intr.exp2")
          return std::exp2(x);
        if (name == "llvm.intr.exp")
          return std::exp(x);
        if (name == "llvm.intr.log2")
          return std::log2(x);
        if (name == "llvm.intr.log")
          return std::log(x);
        if (name == "llvm.intr.floor")
          return std::floor(x);
        if (name == "llvm.intr.ceil")
          return std::ceil(x);
        if (name == "llvm.intr.trunc")
          return std::trunc(x);
        if (name == "llvm.intr.rint" || name == "llvm.intr.roundeven" || name == "llvm.intr.nearbyint")
          return std::nearbyint(x);
        if (name == "llvm.intr.round")
          return std::round(x);
        if (name == "nvvm.rcp.approx.ftz.f") { // the estimate as exact; subnormals in and out flushed
          auto flush = [](auto v) { return std::fpclassify(v) == FP_SUBNORMAL ? std::copysign(decltype(v)(0), v) : v; };
          return flush(decltype(x)(1) / flush(x));
        }
        fault("floating-point operation not modelled");
      };
      return floatOp(type, math, {(*ops[0])[i]});
    });
  }

  static bool compareIntegers(LLVM::ICmpPredicate p, uint64_t a, uint64_t b, unsigned w) {
    int64_t sa = signExtend(a, w), sb = signExtend(b, w);
    a &= maskOf(w);
    b &= maskOf(w);
    switch (p) {
    case LLVM::ICmpPredicate::eq:
      return a == b;
    case LLVM::ICmpPredicate::ne:
      return a != b;
    case LLVM::ICmpPredicate::slt:
      return sa < sb;
    case LLVM::ICmpPredicate::sle:
      return sa <= sb;
    case LLVM::ICmpPredicate::sgt:
      return sa > sb;
    case LLVM::ICmpPredicate::sge:
      return sa >= sb;
    case LLVM::ICmpPredicate::ult:
      return a < b;
    case LLVM::ICmpPredicate::ule:
      return a <= b;
    case LLVM::ICmpPredicate::ugt:
      return a > b;
    case LLVM::ICmpPredicate::uge:
      return a >= b;
    }
    return false;
  }

  static bool compareFloats(LLVM::FCmpPredicate p, double a, double b) {
    const bool unordered = std::isnan(a) || std::isnan(b);
    switch (p) {
    case LLVM::FCmpPredicate::_false:
      return false;
    case LLVM::FCmpPredicate::_true:
      return true;
    case LLVM::FCmpPredicate::oeq:
      return !unordered && a == b;
    case LLVM::FCmpPredicate::ogt:
      return !unordered && a > b;
    case LLVM::FCmpPredicate::oge:
      return !unordered && a >= b;
    case LLVM::FCmpPredicate::olt:
      return !unordered && a < b;
    case LLVM::FCmpPredicate::ole:
      return !unordered && a <= b;
    case LLVM::FCmpPredicate::one:
      return !unordered && a != b;
    case LLVM::FCmpPredicate::ord:
      return !unordered;
    case LLVM::FCmpPredicate::ueq:
      return unordered || a == b;
    case LLVM::FCmpPredicate::ugt:
      return unordered || a > b;
    case LLVM::FCmpPredicate::uge:
      return unordered || a >= b;
    case LLVM::FCmpPredicate::ult:
      return unordered || a < b;
    case LLVM::FCmpPredicate::ule:
      return unordered || a <= b;
    case LLVM::FCmpPredicate::une:
      return unordered || a != b;
    case LLVM::FCmpPredicate::uno:
      return unordered;
    }
    return false;
  }

  /// Casts between scalar types, element by element.
  Bits convert(Lane &lane, Operation *op) {
    Type from = elementOf(op->getOperand(0).getType()), to = elementOf(op->getResult(0).getType());
    StringRef name = op->getName().getStringRef();
    return elementwise(lane, op, [&](size_t i, auto &ops) -> uint64_t {
      uint64_t a = (*ops[0])[i];
      if (name == "llvm.zext" || name == "llvm.ptrtoint" || name == "llvm.inttoptr")
        return a & maskOf(widthOf(from)) & maskOf(widthOf(to));
      if (name == "llvm.sext")
        return uint64_t(signExtend(a, widthOf(from))) & maskOf(widthOf(to));
      if (name == "llvm.trunc")
        return a & maskOf(widthOf(to));
      if (name == "llvm.sitofp")
        return fromDouble(double(signExtend(a, widthOf(from))), to);
      if (name == "llvm.uitofp")
        return fromDouble(double(a & maskOf(widthOf(from))), to);
      if (name == "llvm.fpext" || name == "llvm.fptrunc")
        return fromDouble(toDouble(a, from), to);
      if (name == "llvm.fptosi" || name == "llvm.fptoui") {
        double v = std::trunc(toDouble(a, from));
        if (std::isnan(v))
          return 0; // poison in LLVM; the hardware's conversions give 0 for NaN
        return uint64_t(int64_t(v)) & maskOf(widthOf(to));
      }
      fault("cast not modelled");
    });
  }

  /// A bitcast reinterprets the bytes (vectors of one width to another, or a scalar).
  Bits bitcast(Lane &lane, Operation *op) {
    Type from = op->getOperand(0).getType(), to = op->getResult(0).getType();
    std::vector<uint8_t> bytes(sizeOf(from));
    pack(get(lane, op->getOperand(0)), from, bytes.data());
    return unpack(bytes.data(), to);
  }

  uint32_t laneInWave(const Lane &lane) const { return lane.thread % uint32_t(target.waveSize); }

  /// `value` rounded to nearest even into fp8 `format` (e4m3fn: largest finite 448, NaN
  /// S.1111.111; e5m2: 57344, infinity S.11111.00; the fnuz formats: 240 and 57344, NaN 0x80
  /// and no -0). Past the largest finite value (infinity too) it gives that value with
  /// `saturate`, else infinity where the format has one, else NaN. NaN gives the fnuz NaN or,
  /// for the OCP formats, `ocpNaN`.
  static uint8_t encodeFp8(float value, SmallFloat format, bool saturate, uint8_t ocpNaN) {
    const bool fnuz = format == SmallFloat::E4M3FNUZ || format == SmallFloat::E5M2FNUZ;
    const bool e4m3 = format == SmallFloat::E4M3FN || format == SmallFloat::E4M3FNUZ;
    const int mantissaBits = e4m3 ? 3 : 2;
    const int bias = (e4m3 ? 7 : 15) + fnuz;
    const uint8_t largestCode = fnuz ? 0x7f : e4m3 ? 0x7e : 0x7b;
    const double largest = smallFloatValue(largestCode, format);
    const uint8_t sign = std::signbit(value) ? 0x80 : 0;
    if (std::isnan(value))
      return fnuz ? 0x80 : ocpNaN;
    const uint8_t overflow = saturate ? sign | largestCode
                             : fnuz   ? 0x80
                             : e4m3   ? sign | 0x7f // e4m3fn has no infinity
                                      : sign | 0x7c;
    const double magnitude = std::fabs(double(value));
    if (std::isinf(magnitude))
      return overflow;
    const int minExponent = 1 - bias;
    int exponent = std::max(int(std::floor(std::log2(std::max(magnitude, 1e-300)))), minExponent);
    const double quantum = std::ldexp(1.0, exponent - mantissaBits);
    const double rounded = std::nearbyint(magnitude / quantum) * quantum; // ties to even
    if (rounded > largest)
      return overflow;
    uint8_t code;
    if (rounded < std::ldexp(1.0, minExponent)) { // subnormal or zero
      code = uint8_t(rounded / std::ldexp(1.0, minExponent - mantissaBits));
    } else {
      exponent = int(std::floor(std::log2(rounded)));
      const int mantissa = int((rounded / std::ldexp(1.0, exponent) - 1) * (1 << mantissaBits));
      code = uint8_t((exponent + bias) << mantissaBits) | uint8_t(mantissa);
    }
    return fnuz && code == 0 ? 0 : sign | code;
  }

  /// cvt.rn[.satfinite][.relu].{e4m3x2,e5m2x2}.f32 d, a, b (PTX): a's code in the upper byte.
  Bits convertToFp8x2(Lane &lane, NVVM::ConvertF32x2ToF8x2Op cvt) {
    if (cvt.getRnd() != NVVM::FPRoundingMode::RN && cvt.getRnd() != NVVM::FPRoundingMode::NONE)
      fault("fp8 conversions other than round-to-nearest are not modelled");
    const bool e4m3 = isa<Float8E4M3FNType>(cvt.getDstTy());
    if (!e4m3 && !isa<Float8E5M2Type>(cvt.getDstTy()))
      fault("fp8 conversion to " + typeName(cvt.getDstTy()) + " is not modelled");
    const bool saturate = cvt.getSat() == NVVM::SaturationMode::SATFINITE;
    auto code = [&](Value v) {
      float f = std::bit_cast<float>(uint32_t(scalar(lane, v)));
      if (cvt.getRelu() && !(f >= 0))
        f = std::isnan(f) ? f : 0.f;
      return encodeFp8(f, e4m3 ? SmallFloat::E4M3FN : SmallFloat::E5M2, saturate, /*ocpNaN=*/0x7f);
    };
    const uint8_t a = code(cvt.getA()), b = code(cvt.getB());
    if (isa<VectorType>(cvt.getType()))
      return {b, a}; // the i16's bytes: element 0 is the low one
    return {uint64_t(a) << 8 | b};
  }

  /// cvt.rn.f16x2.{e4m3x2,e5m2x2} d, a (PTX): each byte of a widened to the f16 in the
  /// same half of d (exact: every e4m3fn and e5m2 value is an f16); NaN gives the canonical
  /// f16 NaN 0x7fff, as PTX's conversions do.
  Bits convertFp8x2ToF16x2(Lane &lane, NVVM::ConvertF8x2ToF16x2Op cvt) {
    Type from = cvt.getSrcType();
    if (!isa<Float8E4M3FNType, Float8E5M2Type>(from) || cvt.getRelu())
      fault("fp8 conversion from " + typeName(from) + (cvt.getRelu() ? " with .relu" : "") + " is not modelled");
    const SmallFloat format = isa<Float8E4M3FNType>(from) ? SmallFloat::E4M3FN : SmallFloat::E5M2;
    Bits halves;
    for (uint64_t code : get(lane, cvt.getSrc())) {
      const double value = smallFloatValue(code & 0xff, format);
      halves.push_back(std::isnan(value) ? 0x7fff : std::bit_cast<uint16_t>(_Float16(value)));
    }
    return halves;
  }

  /// CDNA's fp8 (e4m3) and bf8 (e5m2): FNUZ on gfx942, OCP on gfx950, as the MFMA operands.
  SmallFloat cdnaFp8Format(bool bf8) const {
    const bool fnuz = target.name == "gfx942";
    return bf8 ? (fnuz ? SmallFloat::E5M2FNUZ : SmallFloat::E5M2)
               : (fnuz ? SmallFloat::E4M3FNUZ : SmallFloat::E4M3FN);
  }

  /// v_cvt_pk_f32_fp8 / v_cvt_pk_f32_bf8 (CDNA3 and CDNA4 ISA): bytes 2w and 2w + 1 of the
  /// source dword (w the word select) widened exactly to two f32, byte 2w first (formats as
  /// cdnaFp8Format); NaN gives the canonical f32 NaN.
  Bits convertPkFp8ToF32(Lane &lane, Operation *op, bool bf8, bool highWord) {
    const SmallFloat format = cdnaFp8Format(bf8);
    const uint64_t word = scalar(lane, op->getOperand(0));
    Bits pair;
    for (int byte = 0; byte < 2; ++byte) {
      const double value = smallFloatValue(word >> (16 * highWord + 8 * byte) & 0xff, format);
      pair.push_back(std::isnan(value) ? 0x7fc00000u : std::bit_cast<uint32_t>(float(value)));
    }
    return pair;
  }

  /// v_cvt_pk_fp8_f32 / v_cvt_pk_bf8_f32 (CDNA3 and CDNA4 ISA): the two f32 sources rounded
  /// to nearest even into the low (source 0) and high byte of word w of the result (w the
  /// word select), the other word kept from `old` (formats as cdnaFp8Format). With
  /// MODE.FP16_OVFL clear (the default, which our kernels keep), overflow and infinity give
  /// NaN (fnuz's 0x80, e4m3's S.1111.111) or e5m2's infinity; NaN gives 0x80 or S.1111.111.
  /// The clamp bit is ignored.
  uint64_t convertF32PairToPkFp8(Lane &lane, Operation *op, bool bf8, bool highWord) {
    const SmallFloat format = cdnaFp8Format(bf8);
    auto code = [&](Value v) -> uint64_t {
      const float f = std::bit_cast<float>(uint32_t(scalar(lane, v)));
      return encodeFp8(f, format, /*saturate=*/false, uint8_t((std::signbit(f) ? 0x80 : 0) | 0x7f));
    };
    const uint64_t pair = code(op->getOperand(0)) | code(op->getOperand(1)) << 8;
    const uint64_t old = scalar(lane, op->getOperand(2)) & 0xffffffffu;
    const int shift = highWord ? 16 : 0;
    return (old & ~(uint64_t(0xffff) << shift)) | pair << shift;
  }

  /// The PTX our lowering writes as inline assembly for predicated accesses, executed
  /// statement by statement: `.reg .pred p`, `setp.ne.b32 p, $i, 0`, `mov.b32 $i, 0`, and
  /// (under `@p`) `ld.global[.vN].b32` / `st.global[.vN].b32` of 32-bit words. Operands
  /// are numbered outputs first, then inputs, as in LLVM's inline assembly.
  void inlinePtx(Lane &lane, LLVM::InlineAsmOp op) {
    StringRef text = op.getAsmString().trim();
    if (!text.consume_front("{") || !text.consume_back("}"))
      fault("inline assembly '" + op.getAsmString().str() + "' is not a PTX block the emulator models");
    const unsigned outputs = op.getNumResults() == 0 ? 0
                             : isa<LLVM::LLVMStructType>(op.getResult(0).getType())
                                 ? unsigned(scalarsOf(op.getResult(0).getType()).size())
                                 : 1;
    SmallVector<uint64_t> regs(outputs, 0);
    for (Value v : op.getOperands())
      regs.push_back(scalar(lane, v));
    auto reg = [&](StringRef token) -> uint64_t & {
      unsigned i;
      token = token.trim();
      if (!token.consume_front("$") || token.getAsInteger(10, i) || i >= regs.size())
        fault("inline PTX operand '" + token.str() + "'");
      return regs[i];
    };
    auto registersIn = [&](StringRef list) {
      SmallVector<StringRef> items;
      list.trim().trim("{}").split(items, ',');
      return items;
    };
    bool p = false;
    SmallVector<StringRef> statements;
    text.split(statements, ';', -1, false);
    for (StringRef statement : statements) {
      statement = statement.trim();
      if (statement.empty() || statement == ".reg .pred p")
        continue;
      if (statement.consume_front("setp.ne.b32 p,")) {
        auto [x, zero] = statement.split(',');
        if (zero.trim() != "0")
          fault("inline PTX '" + statement.str() + "'");
        p = (reg(x) & 0xffffffff) != 0;
        continue;
      }
      if (statement.consume_front("mov.b32 ")) {
        auto [dst, value] = statement.split(',');
        if (value.trim() != "0")
          fault("inline PTX 'mov.b32 " + statement.str() + "'");
        reg(dst) = 0;
        continue;
      }
      const bool guarded = statement.consume_front("@p ");
      if (guarded && !p)
        continue;
      unsigned words = 1;
      bool load = statement.consume_front("ld.global"), store = !load && statement.consume_front("st.global");
      if ((load || store) && statement.consume_front(".v"))
        statement.consumeInteger(10, words);
      if (!(load || store) || !statement.consume_front(".b32 ") || words > 4)
        fault("inline PTX statement '" + statement.str() + "' is not modelled");
      if (load) {
        auto [dst, address] = statement.rsplit(',');
        auto items = registersIn(dst);
        uint64_t at = reg(address.trim().trim("[]"));
        const uint8_t *bytes = global(at, 4 * words, "ld.global");
        for (unsigned w = 0; w < words && w < items.size(); ++w) {
          uint32_t v;
          std::memcpy(&v, bytes + 4 * w, 4);
          reg(items[w]) = v;
        }
      } else {
        auto [address, src] = statement.split(',');
        auto items = registersIn(src);
        uint8_t *bytes = global(reg(address.trim().trim("[]")), 4 * words, "st.global");
        for (unsigned w = 0; w < words && w < items.size(); ++w) {
          uint32_t v = uint32_t(reg(items[w]));
          std::memcpy(bytes + 4 * w, &v, 4);
        }
      }
    }
    if (outputs == 1 && !isa<LLVM::LLVMStructType>(op.getResult(0).getType()))
      set(lane, op.getResult(0), {regs[0]});
    else if (outputs)
      set(lane, op.getResult(0), Bits(regs.begin(), regs.begin() + outputs));
  }

  Step execute(Lane &lane, Operation *op) {
    StringRef name = op->getName().getStringRef();
    auto result = [&](Bits bits) {
      set(lane, op->getResult(0), std::move(bits));
      return Step::Next;
    };
    auto id = [&](std::array<uint32_t, 3> v, StringRef n) { return result({v[n.back() - 'x']}); };

    // Control flow.
    if (auto br = dyn_cast<LLVM::BrOp>(op)) {
      branch(lane, br.getDest(), br.getDestOperands());
      return Step::Jumped;
    }
    if (auto br = dyn_cast<LLVM::CondBrOp>(op)) {
      if (scalar(lane, br.getCondition()) & 1)
        branch(lane, br.getTrueDest(), br.getTrueDestOperands());
      else
        branch(lane, br.getFalseDest(), br.getFalseDestOperands());
      return Step::Jumped;
    }
    if (auto sw = dyn_cast<LLVM::SwitchOp>(op)) {
      uint64_t v = scalar(lane, sw.getValue()) & maskOf(widthOf(sw.getValue().getType()));
      if (auto values = sw.getCaseValues())
        for (auto [i, c] : llvm::enumerate(values->getValues<APInt>()))
          if (c.getZExtValue() == v) {
            branch(lane, sw.getCaseDestinations()[i], sw.getCaseOperands(i));
            return Step::Jumped;
          }
      branch(lane, sw.getDefaultDestination(), sw.getDefaultOperands());
      return Step::Jumped;
    }
    if (isa<LLVM::ReturnOp>(op))
      return Step::Return;

    // Constants.
    if (auto c = dyn_cast<LLVM::ConstantOp>(op))
      return result(constantBits(c.getValue(), c.getType()));
    if (isa<LLVM::PoisonOp, LLVM::UndefOp, LLVM::ZeroOp>(op))
      return result(Bits(scalarsOf(op->getResult(0).getType()).size(), 0));
    if (auto address = dyn_cast<LLVM::AddressOfOp>(op)) {
      auto global = SymbolTable::lookupNearestSymbolFrom<LLVM::GlobalOp>(op, address.getGlobalNameAttr());
      auto it = global ? ldsOffsets.find(global) : ldsOffsets.end();
      if (it == ldsOffsets.end())
        fault("only LDS globals are modelled");
      return result({it->second});
    }

    // Integer and floating-point arithmetic.
    if (isa<LLVM::AddOp, LLVM::SubOp, LLVM::MulOp, LLVM::AndOp, LLVM::OrOp, LLVM::XOrOp, LLVM::ShlOp, LLVM::LShrOp,
            LLVM::AShrOp, LLVM::UDivOp, LLVM::SDivOp, LLVM::URemOp, LLVM::SRemOp>(op))
      return result(integerBinary(lane, op));
    if (isa<LLVM::FAddOp, LLVM::FSubOp, LLVM::FMulOp, LLVM::FDivOp, LLVM::FRemOp, LLVM::MaximumOp, LLVM::MinimumOp,
            LLVM::MaxNumOp, LLVM::MinNumOp, LLVM::CopySignOp>(op))
      return result(floatBinary(lane, op));
    if (isa<LLVM::FNegOp, LLVM::FAbsOp, LLVM::SqrtOp, LLVM::Exp2Op, LLVM::ExpOp, LLVM::Log2Op, LLVM::LogOp,
            LLVM::FFloorOp, LLVM::FCeilOp, LLVM::FTruncOp, LLVM::RintOp, LLVM::RoundEvenOp, LLVM::NearbyintOp,
            LLVM::RoundOp, NVVM::RcpApproxFtzF32Op>(op))
      return result(floatUnary(lane, op));
    if (isa<LLVM::FMAOp, LLVM::FMulAddOp>(op)) {
      Type type = elementOf(op->getResult(0).getType());
      return result(elementwise(lane, op, [&](size_t i, auto &ops) {
        return floatOp(type, [](auto a, auto b, auto c) { return std::fma(a, b, c); },
                       {(*ops[0])[i], (*ops[1])[i], (*ops[2])[i]});
      }));
    }
    if (isa<LLVM::SMaxOp, LLVM::SMinOp, LLVM::UMaxOp, LLVM::UMinOp>(op)) {
      unsigned w = widthOf(elementOf(op->getResult(0).getType()));
      return result(elementwise(lane, op, [&](size_t i, auto &ops) -> uint64_t {
        uint64_t a = (*ops[0])[i] & maskOf(w), b = (*ops[1])[i] & maskOf(w);
        bool less = isa<LLVM::SMaxOp, LLVM::SMinOp>(op) ? signExtend(a, w) < signExtend(b, w) : a < b;
        return isa<LLVM::SMaxOp, LLVM::UMaxOp>(op) == less ? b : a;
      }));
    }
    if (auto cmp = dyn_cast<LLVM::ICmpOp>(op)) {
      unsigned w = widthOf(elementOf(cmp.getLhs().getType()));
      return result(elementwise(lane, op, [&](size_t i, auto &ops) -> uint64_t {
        return compareIntegers(cmp.getPredicate(), (*ops[0])[i], (*ops[1])[i], w);
      }));
    }
    if (auto cmp = dyn_cast<LLVM::FCmpOp>(op)) {
      Type t = elementOf(cmp.getLhs().getType());
      return result(elementwise(lane, op, [&](size_t i, auto &ops) -> uint64_t {
        return compareFloats(cmp.getPredicate(), toDouble((*ops[0])[i], t), toDouble((*ops[1])[i], t));
      }));
    }
    if (auto select = dyn_cast<LLVM::SelectOp>(op)) {
      const Bits &c = get(lane, select.getCondition());
      const Bits &t = get(lane, select.getTrueValue()), &f = get(lane, select.getFalseValue());
      Bits out(t.size());
      for (size_t i = 0; i < out.size(); ++i)
        out[i] = (c[c.size() == 1 ? 0 : i] & 1) ? t[i] : f[i];
      return result(out);
    }
    if (isa<LLVM::ZExtOp, LLVM::SExtOp, LLVM::TruncOp, LLVM::SIToFPOp, LLVM::UIToFPOp, LLVM::FPToSIOp, LLVM::FPToUIOp,
            LLVM::FPExtOp, LLVM::FPTruncOp, LLVM::PtrToIntOp, LLVM::IntToPtrOp>(op))
      return result(convert(lane, op));
    if (isa<LLVM::BitcastOp>(op))
      return result(bitcast(lane, op));

    // Vectors and aggregates.
    if (auto extract = dyn_cast<LLVM::ExtractElementOp>(op)) {
      const Bits &v = get(lane, extract.getVector());
      uint64_t i = scalar(lane, extract.getPosition()) & maskOf(widthOf(extract.getPosition().getType()));
      if (i >= v.size())
        fault("extractelement index " + std::to_string(i) + " past " + std::to_string(v.size()) + " elements");
      return result({v[i]});
    }
    if (auto insert = dyn_cast<LLVM::InsertElementOp>(op)) {
      Bits v = get(lane, insert.getVector());
      uint64_t i = scalar(lane, insert.getPosition()) & maskOf(widthOf(insert.getPosition().getType()));
      if (i >= v.size())
        fault("insertelement index " + std::to_string(i) + " past " + std::to_string(v.size()) + " elements");
      v[i] = scalar(lane, insert.getValue());
      return result(v);
    }
    if (auto shuffle = dyn_cast<LLVM::ShuffleVectorOp>(op)) {
      const Bits &a = get(lane, shuffle.getV1()), &b = get(lane, shuffle.getV2());
      Bits out;
      for (int32_t i : shuffle.getMask())
        out.push_back(i < 0 ? 0 : size_t(i) < a.size() ? a[i] : b[i - a.size()]);
      return result(out);
    }
    if (isa<LLVM::ExtractValueOp, LLVM::InsertValueOp>(op)) {
      Type container = op->getOperand(0).getType();
      ArrayRef<int64_t> position = isa<LLVM::ExtractValueOp>(op) ? cast<LLVM::ExtractValueOp>(op).getPosition()
                                                                 : cast<LLVM::InsertValueOp>(op).getPosition();
      // The flat index of the position and how many elements it spans.
      size_t start = 0;
      Type current = container;
      for (int64_t p : position) {
        if (auto s = dyn_cast<LLVM::LLVMStructType>(current)) {
          for (int64_t f = 0; f < p; ++f)
            start += scalarsOf(s.getBody()[f]).size();
          current = s.getBody()[p];
        } else if (auto a = dyn_cast<LLVM::LLVMArrayType>(current)) {
          start += p * scalarsOf(a.getElementType()).size();
          current = a.getElementType();
        } else {
          fault("aggregate position into " + typeName(current));
        }
      }
      size_t count = scalarsOf(current).size();
      if (auto extract = dyn_cast<LLVM::ExtractValueOp>(op)) {
        const Bits &v = get(lane, extract.getContainer());
        return result(Bits(v.begin() + start, v.begin() + start + count));
      }
      auto insert = cast<LLVM::InsertValueOp>(op);
      Bits v = get(lane, insert.getContainer());
      const Bits &part = get(lane, insert.getValue());
      std::copy(part.begin(), part.end(), v.begin() + start);
      return result(v);
    }

    // Memory.
    if (auto gep = dyn_cast<LLVM::GEPOp>(op))
      return result({elementAddress(lane, gep)});
    if (auto load = dyn_cast<LLVM::LoadOp>(op)) {
      Type type = load.getType();
      uint64_t bytes = sizeOf(type), address = scalar(lane, load.getAddr());
      const bool lds = cast<LLVM::LLVMPointerType>(load.getAddr().getType()).getAddressSpace() == 3;
      return result(unpack(lds ? sharedRead(address, bytes, "ld.shared")
                               : memory(load.getAddr().getType(), address, bytes, "load"),
                           type));
    }
    if (auto rmw = dyn_cast<LLVM::AtomicRMWOp>(op)) {
      // Lanes run one at a time, so the read-modify-write is atomic by construction.
      Type type = rmw.getVal().getType();
      const bool integer = rmw.getBinOp() == LLVM::AtomicBinOp::add, real = rmw.getBinOp() == LLVM::AtomicBinOp::fadd;
      if (!integer && !real)
        fault("atomic " + stringifyAtomicBinOp(rmw.getBinOp()).str() + " is not modelled");
      uint8_t *bytes = memory(rmw.getPtr().getType(), scalar(lane, rmw.getPtr()), sizeOf(type), "atomic");
      Bits previous = unpack(bytes, type);
      uint64_t addend = get(lane, rmw.getVal())[0];
      uint64_t sum = integer ? (previous[0] + addend) & maskOf(widthOf(type))
                             : floatOp(type, [](auto a, auto b, auto) { return a + b; }, {previous[0], addend});
      pack({sum}, type, bytes);
      return result(previous);
    }
    if (auto store = dyn_cast<LLVM::StoreOp>(op)) {
      Type type = store.getValue().getType();
      uint64_t bytes = sizeOf(type);
      if (cast<LLVM::LLVMPointerType>(store.getAddr().getType()).getAddressSpace() == 3)
        checkSharedWrite(scalar(lane, store.getAddr()), bytes, "st.shared");
      pack(get(lane, store.getValue()), type,
           memory(store.getAddr().getType(), scalar(lane, store.getAddr()), bytes, "store"));
      return Step::Next;
    }

    // AMD.
    if (name == "rocdl.workitem.id.x" || name == "rocdl.workitem.id.y" || name == "rocdl.workitem.id.z")
      return id(lane.tid, name);
    if (name == "rocdl.workgroup.id.x" || name == "rocdl.workgroup.id.y" || name == "rocdl.workgroup.id.z")
      return id(group, name);
    if (isa<ROCDL::BarrierOp, ROCDL::SBarrierOp>(op))
      return Step::Barrier;
    if (isa<ROCDL::SWaitcntOp, ROCDL::SchedBarrier, LLVM::FenceOp>(op))
      return Step::Next; // every access (but cp.async) completes when issued here
    if (auto rsrc = dyn_cast<ROCDL::MakeBufferRsrcOp>(op))
      return result({scalar(lane, rsrc.getBase()), scalar(lane, rsrc.getStride()) & 0xffff,
                     scalar(lane, rsrc.getNumRecords()), scalar(lane, rsrc.getFlags()) & 0xffffffff});
    if (auto load = dyn_cast<ROCDL::RawPtrBufferLoadOp>(op)) {
      Bits out;
      bufferAccess(get(lane, load.getRsrc()), scalar(lane, load.getOffset()), scalar(lane, load.getSoffset()),
                   load.getType(), &out, nullptr);
      return result(out);
    }
    if (auto store = dyn_cast<ROCDL::RawPtrBufferStoreOp>(op)) {
      const Bits &value = get(lane, store.getVdata());
      bufferAccess(get(lane, store.getRsrc()), scalar(lane, store.getOffset()), scalar(lane, store.getSoffset()),
                   store.getVdata().getType(), nullptr, &value);
      return Step::Next;
    }
    if (auto mbcnt = dyn_cast<ROCDL::MbcntLoOp>(op)) {
      // Set bits of the mask's low half below this lane.
      uint32_t l = laneInWave(lane), mask = uint32_t(scalar(lane, mbcnt.getIn0()));
      uint32_t below = l >= 32 ? mask : mask & uint32_t((uint64_t(1) << l) - 1);
      return result({(uint32_t(std::popcount(below)) + uint32_t(scalar(lane, mbcnt.getIn1()))) & 0xffffffffu});
    }
    if (auto mbcnt = dyn_cast<ROCDL::MbcntHiOp>(op)) {
      uint32_t l = laneInWave(lane), mask = uint32_t(scalar(lane, mbcnt.getIn0()));
      uint32_t below = l < 32 ? 0 : mask & uint32_t((uint64_t(1) << (l - 32)) - 1);
      return result({(uint32_t(std::popcount(below)) + uint32_t(scalar(lane, mbcnt.getIn1()))) & 0xffffffffu});
    }
    if (isa<ROCDL::DsBpermuteOp, ROCDL::DPPUpdateOp, NVVM::ShflOp, ROCDL::ReadlaneOp, ROCDL::ReadfirstlaneOp,
            ROCDL::BallotOp, ROCDL::GlobalLoadLDSOp, ROCDL::RawPtrBufferLoadLdsOp, NVVM::LdMatrixOp, NVVM::MmaOp,
            NVVM::WgmmaMmaAsyncOp>(op) ||
        name.starts_with("rocdl.mfma.") || isMmaIntrinsic(op))
      return Step::CrossLane;

    // NVIDIA.
    if (name.starts_with("nvvm.read.ptx.sreg.")) {
      StringRef reg = name.drop_front(strlen("nvvm.read.ptx.sreg."));
      if (reg.starts_with("tid."))
        return id(lane.tid, reg);
      if (reg.starts_with("ctaid."))
        return id(group, reg);
      if (reg.starts_with("ntid."))
        return id(kernel.block, reg);
      if (reg.starts_with("nctaid."))
        return id(grid, reg);
      if (reg == "laneid")
        return result({laneInWave(lane)});
      if (reg == "warpid")
        return result({lane.thread / uint32_t(target.waveSize)});
    }
    if (isa<NVVM::Barrier0Op, NVVM::BarrierOp>(op))
      return Step::Barrier;
    // wgmma computes when issued here; commits and waits only track which groups' shared
    // reads may still be outstanding on the hardware (WarpgroupRead).
    if (isa<NVVM::WgmmaGroupSyncAlignedOp>(op)) {
      ++lane.wgmmaGroups;
      return Step::Next;
    }
    if (auto wait = dyn_cast<NVVM::WgmmaWaitGroupSyncOp>(op)) {
      retireWarpgroupGroups(lane, wait.getGroup());
      return Step::Next;
    }
    if (isa<NVVM::WgmmaFenceAlignedOp, NVVM::FenceProxyOp>(op))
      return Step::Next;
    if (auto cvt = dyn_cast<NVVM::ConvertF32x2ToF8x2Op>(op))
      return result(convertToFp8x2(lane, cvt));
    if (auto cvt = dyn_cast<NVVM::ConvertF8x2ToF16x2Op>(op))
      return result(convertFp8x2ToF16x2(lane, cvt));
    if (auto cvt = dyn_cast<ROCDL::CvtPkF32Fp8Op>(op))
      return result(convertPkFp8ToF32(lane, op, /*bf8=*/false, cvt.getWordSel()));
    if (auto cvt = dyn_cast<ROCDL::CvtPkF32Bf8Op>(op))
      return result(convertPkFp8ToF32(lane, op, /*bf8=*/true, cvt.getWordSel()));
    if (auto cvt = dyn_cast<ROCDL::CvtPkFp8F32Op>(op))
      return result({convertF32PairToPkFp8(lane, op, /*bf8=*/false, cvt.getWordSel())});
    if (auto cvt = dyn_cast<ROCDL::CvtPkBf8F32Op>(op))
      return result({convertF32PairToPkFp8(lane, op, /*bf8=*/true, cvt.getWordSel())});
    if (auto prmt = dyn_cast<NVVM::PermuteOp>(op)) {
      // prmt.b32 (default mode): selector nibble n picks byte (nibble & 7) of {hi, lo} into
      // result byte n; with the nibble's bit 3 set the picked byte's sign fills it instead.
      if (prmt.getMode() != NVVM::PermuteMode::DEFAULT || !prmt.getHi())
        fault("prmt is modelled in its default mode with two sources only");
      const uint64_t pool = (scalar(lane, prmt.getLo()) & 0xffffffffu) | (scalar(lane, prmt.getHi()) & 0xffffffffu)
                                                                             << 32;
      const uint64_t selector = scalar(lane, prmt.getSelector());
      uint64_t out = 0;
      for (int n = 0; n < 4; ++n) {
        const uint64_t nibble = (selector >> (4 * n)) & 15, byte = (pool >> (8 * (nibble & 7))) & 0xff;
        out |= ((nibble & 8) ? ((byte & 0x80) ? 0xff : 0) : byte) << (8 * n);
      }
      return result({out});
    }
    if (auto dp4a = dyn_cast<NVVM::DotAccumulate4WayOp>(op)) {
      // dp4a: c + the sum of the four byte products, each byte sign- or zero-extended.
      const Bits &a = get(lane, dp4a.getA()), &b = get(lane, dp4a.getB());
      const bool aSigned = dp4a.getAType() == NVVM::DotAccumulateType::SIGNED;
      const bool bSigned = dp4a.getBType() == NVVM::DotAccumulateType::SIGNED;
      int64_t sum = signExtend(scalar(lane, dp4a.getC()), 32);
      for (size_t i = 0; i < 4; ++i)
        sum += (aSigned ? signExtend(a[i], 8) : int64_t(a[i] & 0xff)) *
               (bSigned ? signExtend(b[i], 8) : int64_t(b[i] & 0xff));
      return result({uint64_t(sum) & 0xffffffffu});
    }
    if (auto call = dyn_cast<LLVM::CallIntrinsicOp>(op); call && call.getIntrin() == "llvm.amdgcn.sdot4") {
      // V_DOT4_I32_I8 (CDNA3 ISA): c + the sum of the four signed byte products of a and b,
      // byte 0 in bits 7:0; with clamp the sum saturates to i32, without it wraps.
      const uint64_t a = scalar(lane, call.getOperand(0)), b = scalar(lane, call.getOperand(1));
      int64_t sum = signExtend(scalar(lane, call.getOperand(2)), 32);
      for (int i = 0; i < 4; ++i)
        sum += signExtend(a >> (8 * i), 8) * signExtend(b >> (8 * i), 8);
      if (scalar(lane, call.getOperand(3)) & 1)
        sum = std::clamp<int64_t>(sum, INT32_MIN, INT32_MAX);
      return result({uint64_t(sum) & 0xffffffffu});
    }
    if (auto assembly = dyn_cast<LLVM::InlineAsmOp>(op)) {
      inlinePtx(lane, assembly);
      return Step::Next;
    }
    if (auto copy = dyn_cast<NVVM::CpAsyncOp>(op)) {
      // cp.async: src-size bytes from global memory, the rest of `size` zero-filled.
      const uint32_t size = copy.getSize();
      const uint64_t from = copy.getCpSize() ? scalar(lane, copy.getCpSize()) & 0xffffffff : size;
      if (from > size)
        fault("cp.async source size " + std::to_string(from) + " exceeds its size " + std::to_string(size));
      PendingCopy pending{scalar(lane, copy.getDst()), std::vector<uint8_t>(size, 0)};
      checkSharedWrite(pending.ldsOffset, size, "cp.async");
      if (from)
        std::memcpy(pending.bytes.data(), global(scalar(lane, copy.getSrc()), from, "cp.async read"), from);
      shared(pending.ldsOffset, size, "cp.async write");
      for (uint32_t i = 0; i < size; ++i)
        ++copyTargets[pending.ldsOffset + i];
      lane.openGroup.push_back(std::move(pending));
      return Step::Next;
    }
    if (isa<NVVM::CpAsyncCommitGroupOp>(op)) {
      lane.committed.push_back(std::move(lane.openGroup));
      lane.openGroup.clear();
      return Step::Next;
    }
    if (auto wait = dyn_cast<NVVM::CpAsyncWaitGroupOp>(op)) {
      // At most n committed groups stay in flight; the older ones land now.
      const size_t n = wait.getN();
      while (lane.committed.size() > n) {
        for (const PendingCopy &copy : lane.committed.front()) {
          std::memcpy(shared(copy.ldsOffset, copy.bytes.size(), "cp.async write"), copy.bytes.data(),
                      copy.bytes.size());
          for (size_t i = 0; i < copy.bytes.size(); ++i)
            --copyTargets[copy.ldsOffset + i];
        }
        lane.committed.erase(lane.committed.begin());
      }
      return Step::Next;
    }

    fault("the emulator does not model " + name.str() + " yet");
  }

  //===--------------------------------------------------------------------===//
  // Cross-lane operations, lanes [first, last) of one wave
  //===--------------------------------------------------------------------===//

  void crossLane(Operation *op, uint32_t first, uint32_t last) {
    const uint32_t size = last - first;
    auto laneAt = [&](uint32_t l) -> Lane & { return lanes[first + l]; };
    auto active = [&](uint32_t l) { return l < size && laneAt(l).state != LaneState::Done; };
    auto operand = [&](uint32_t l, unsigned i) -> const Bits & { return get(laneAt(l), op->getOperand(i)); };
    SmallVector<Bits> results(size);
    try {
      if (isa<ROCDL::DsBpermuteOp>(op)) {
        // Each lane reads the data of the lane its byte address names (bits [7:2]).
        for (uint32_t l = 0; l < size; ++l) {
          if (!active(l))
            continue;
          uint32_t source = (uint32_t(operand(l, 0)[0]) >> 2) & (uint32_t(target.waveSize) - 1);
          if (!active(source))
            fault("ds_bpermute of lane " + std::to_string(l) + " reads lane " + std::to_string(source) +
                  ", which has exited");
          results[l] = operand(source, 1);
        }
      } else if (auto dpp = dyn_cast<ROCDL::DPPUpdateOp>(op)) {
        const uint32_t ctrl = uint32_t(dpp.getDppCtrl()), rowMask = uint32_t(dpp.getRowMask()),
                       bankMask = uint32_t(dpp.getBankMask());
        for (uint32_t l = 0; l < size; ++l) {
          if (!active(l))
            continue;
          const uint32_t row = l / 16, inRow = l % 16;
          if (!((rowMask >> row) & 1) || !((bankMask >> (inRow / 4)) & 1)) {
            results[l] = operand(l, 0); // lane not written: keeps `old`
            continue;
          }
          int64_t source = dppSource(ctrl, l, size);
          if (source < 0 || !active(uint32_t(source)))
            results[l] = dpp.getBoundCtrl() ? Bits(operand(l, 1).size(), 0) : operand(l, 0);
          else
            results[l] = operand(uint32_t(source), 1);
        }
      } else if (auto shfl = dyn_cast<NVVM::ShflOp>(op)) {
        // PTX shfl.sync: c = clamp[4:0], segmask = clamp[12:8].
        for (uint32_t l = 0; l < size; ++l) {
          if (!active(l))
            continue;
          const uint32_t b = uint32_t(operand(l, 2)[0]), clamp = uint32_t(operand(l, 3)[0]);
          const uint32_t c = clamp & 0x1f, segmask = (clamp >> 8) & 0x1f;
          const uint32_t maxLane = (l & segmask) | (c & ~segmask), minLane = l & segmask;
          int64_t j = l;
          bool valid = false;
          switch (shfl.getKind()) {
          case NVVM::ShflKind::up:
            j = int64_t(l) - b;
            valid = j >= int64_t(maxLane);
            break;
          case NVVM::ShflKind::down:
            j = int64_t(l) + b;
            valid = j <= int64_t(maxLane);
            break;
          case NVVM::ShflKind::bfly:
            j = l ^ b;
            valid = j <= int64_t(maxLane);
            break;
          case NVVM::ShflKind::idx:
            j = minLane | (b & ~segmask);
            valid = j <= int64_t(maxLane);
            break;
          }
          if (!valid)
            j = l;
          if (!active(uint32_t(j)))
            fault("shfl.sync of lane " + std::to_string(l) + " reads lane " + std::to_string(j) + ", which has exited");
          Bits value = operand(uint32_t(j), 1);
          if (isa<LLVM::LLVMStructType>(shfl.getType()))
            value.push_back(valid);
          results[l] = value;
        }
      } else if (isa<ROCDL::BallotOp>(op)) {
        uint64_t mask = 0;
        for (uint32_t l = 0; l < size; ++l)
          if (active(l) && (operand(l, 0)[0] & 1))
            mask |= uint64_t(1) << l;
        for (uint32_t l = 0; l < size; ++l)
          results[l] = {mask};
      } else if (isa<ROCDL::GlobalLoadLDSOp, ROCDL::RawPtrBufferLoadLdsOp>(op)) {
        ldsDma(op, first, size);
        for (uint32_t l = 0; l < size; ++l)
          if (active(l)) {
            laneAt(l).state = LaneState::Running;
            ++laneAt(l).next;
          }
        return;
      } else if (name(op).starts_with("rocdl.mfma.scale.")) {
        scaledMfma(op, first, size, results);
      } else if (name(op).starts_with("rocdl.mfma.")) {
        mfma(op, first, size, results);
      } else if (isa<NVVM::LdMatrixOp>(op)) {
        ldmatrix(cast<NVVM::LdMatrixOp>(op), first, size, results);
      } else if (isa<NVVM::MmaOp>(op) || isMmaIntrinsic(op)) {
        mmaSync(op, first, size, results);
      } else if (auto wgmma = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op)) {
        warpgroupMma(wgmma, first, size, results);
      } else if (isa<ROCDL::ReadlaneOp, ROCDL::ReadfirstlaneOp>(op)) {
        uint32_t firstActive = 0;
        while (!active(firstActive))
          ++firstActive;
        for (uint32_t l = 0; l < size; ++l) {
          if (!active(l))
            continue;
          uint32_t source = isa<ROCDL::ReadlaneOp>(op) ? uint32_t(operand(l, 1)[0]) % size : firstActive;
          results[l] = operand(source, 0);
        }
      }
    } catch (Fault &f) {
      f.message = (target.isAMD() ? "wave " : "warp ") + std::to_string(first / target.waveSize) + ": " + f.message +
                  " (" + describe(op) + ")";
      throw;
    }
    for (uint32_t l = 0; l < size; ++l)
      if (active(l)) {
        set(laneAt(l), op->getResult(0), std::move(results[l]));
        laneAt(l).state = LaneState::Running;
        ++laneAt(l).next;
      }
  }

  static StringRef name(Operation *op) { return op->getName().getStringRef(); }

  static constexpr uint32_t kWarpgroupThreads = 128;
  static bool isWarpgroupOp(Operation *op) { return isa<NVVM::WgmmaMmaAsyncOp>(op); }

  static bool isMmaIntrinsic(Operation *op) {
    auto call = dyn_cast<LLVM::CallIntrinsicOp>(op);
    return call && call.getIntrin().starts_with("llvm.nvvm.mma.");
  }

  /// Every active lane of the wave must be here; the wave's lanes that exited are an error
  /// for the matrix operations (their operands are the other lanes' data).
  void requireFullWave(Operation *op, uint32_t first, uint32_t size) {
    for (uint32_t l = 0; l < uint32_t(target.waveSize); ++l)
      if (l >= size || lanes[first + l].state == LaneState::Done)
        fault("lane " + std::to_string(l) + " of the wave has exited before " + name(op).str() +
              ", which needs all of them");
  }

  /// The `count` codes of `bits` each `width` bits wide, lowest first (an i64 of eight fp8
  /// codes, a vector<4xi16> of bf16, ...).
  /// Elements are consecutive `width`-bit fields of the operand's bits taken as one little-
  /// endian stream, so 6-bit codes may straddle 32-bit words (block-scaled fp6 operands).
  static SmallVector<uint64_t, 16> codes(const Bits &bits, Type type, unsigned width) {
    std::vector<bool> stream;
    for (auto [t, v] : llvm::zip(scalarsOf(type), bits))
      for (unsigned i = 0; i < widthOf(t); ++i)
        stream.push_back((v >> i) & 1);
    SmallVector<uint64_t, 16> out;
    for (size_t at = 0; at + width <= stream.size(); at += width) {
      uint64_t code = 0;
      for (unsigned i = 0; i < width; ++i)
        code |= uint64_t(stream[at + i]) << i;
      out.push_back(code);
    }
    return out;
  }

  /// The value of an element code of a matrix operand.
  double decode(uint64_t code, StringRef kind) const {
    if (kind == "bf16")
      return std::bit_cast<float>(uint32_t(code) << 16);
    if (kind == "f16")
      return double(std::bit_cast<_Float16>(uint16_t(code)));
    if (kind == "i8")
      return double(int8_t(code));
    // fp8 / bf8: OCP e4m3fn and e5m2 on gfx950 and sm_90; gfx942's MFMA reads the FNUZ ones.
    const bool fnuz = target.name == "gfx942";
    if (kind == "fp8" || kind == "e4m3")
      return smallFloatValue(code, fnuz ? SmallFloat::E4M3FNUZ : SmallFloat::E4M3FN);
    if (kind == "bf8" || kind == "e5m2")
      return smallFloatValue(code, fnuz ? SmallFloat::E5M2FNUZ : SmallFloat::E5M2);
    fault("matrix operands of type " + kind.str() + " are not modelled");
  }

  /// MFMA (AMD CDNA3/CDNA4 ISA, matrix instructions; one block): with G = 64 / M lane groups
  /// and E = K / G elements per lane, lane l holds A[l % M][(l / M)·E + e] and
  /// B[(l / M)·E + e][l % M] for e < E. Accumulators: 32×32, lane l, register r:
  /// D[8·(r / 4) + 4·(l / 32) + r % 4][l % 32]; 16×16: D[4·(l / 16) + r][l % 16].
  void mfma(Operation *op, uint32_t first, uint32_t size, SmallVector<Bits> &results) {
    requireFullWave(op, first, size);
    // rocdl.mfma.<out>.<M>x<N>x<K>[.]<type>[.<type>][.1k]
    StringRef rest = name(op).drop_front(strlen("rocdl.mfma."));
    auto [out, shapeAndType] = rest.split('.');
    unsigned m = 0, n = 0, k = 0;
    StringRef text = shapeAndType;
    auto number = [&](unsigned &v) {
      size_t digits = text.find_first_not_of("0123456789");
      text.substr(0, digits).getAsInteger(10, v);
      text = text.drop_front(digits);
    };
    number(m);
    text.consume_front("x");
    number(n);
    text.consume_front("x");
    number(k);
    text.consume_front(".");
    // The operand types: one for both ("bf16", "i8", "bf16.1k") or A's then B's ("fp8.bf8").
    auto [kindA, afterA] = text.split('.');
    StringRef kindB = afterA.split('.').first;
    if (kindB != "fp8" && kindB != "bf8")
      kindB = kindA;
    auto known = [](StringRef t) { return t == "bf16" || t == "f16" || t == "fp8" || t == "bf8" || t == "i8"; };
    if (m != n || (m != 32 && m != 16) || 64 % m || !k || !(out == "f32" || out == "i32") || !known(kindA))
      fault(name(op).str() + " is not a single-block MFMA the emulator models");
    for (unsigned i = 3; i < 6; ++i)
      if (get(lanes[first], op->getOperand(i))[0] != 0)
        fault("MFMA broadcast controls (cbsz, abid, blgp) other than 0 are not modelled");
    const unsigned groups = 64 / m, perLane = k / groups;
    const unsigned width = kindA == "bf16" || kindA == "f16" ? 16 : 8;
    std::vector<double> a(m * k), b(k * n);
    for (uint32_t l = 0; l < 64; ++l) {
      auto aCodes = codes(get(lanes[first + l], op->getOperand(0)), op->getOperand(0).getType(), width);
      auto bCodes = codes(get(lanes[first + l], op->getOperand(1)), op->getOperand(1).getType(), width);
      if (aCodes.size() != perLane || bCodes.size() != perLane)
        fault(name(op).str() + ": operands hold " + std::to_string(aCodes.size()) + " elements per lane, not " +
              std::to_string(perLane));
      for (unsigned e = 0; e < perLane; ++e) {
        a[(l % m) * k + (l / m) * perLane + e] = decode(aCodes[e], kindA);
        b[((l / m) * perLane + e) * n + l % m] = decode(bCodes[e], kindB);
      }
    }
    const unsigned perLaneAcc = m * n / 64;
    for (uint32_t l = 0; l < 64; ++l) {
      Bits acc = get(lanes[first + l], op->getOperand(2));
      for (unsigned r = 0; r < perLaneAcc; ++r) {
        unsigned row = m == 32 ? 8 * (r / 4) + 4 * (l / 32) + r % 4 : 4 * (l / 16) + r, col = l % m;
        double sum = 0;
        for (unsigned i = 0; i < k; ++i)
          sum += a[row * k + i] * b[i * n + col];
        if (out == "i32")
          acc[r] = uint64_t(int64_t(int32_t(uint32_t(acc[r]))) + int64_t(sum)) & 0xffffffff;
        else
          acc[r] = std::bit_cast<uint32_t>(float(double(std::bit_cast<float>(uint32_t(acc[r]))) + sum));
      }
      results[l] = acc;
    }
  }

  /// The value of an element of a block-scaled MFMA operand of format `format` (CDNA4 ISA:
  /// 0 fp8 e4m3, 1 bf8 e5m2, 2 fp6 e2m3, 3 bf6 e3m2, 4 fp4 e2m1).
  static double decodeScaled(uint64_t code, int64_t format) {
    static constexpr SmallFloat formats[] = {SmallFloat::E4M3FN, SmallFloat::E5M2, SmallFloat::E2M3, SmallFloat::E3M2,
                                             SmallFloat::E2M1};
    if (format >= 0 && format < 5)
      return smallFloatValue(code, formats[format]);
    fault("block-scaled MFMA operand format " + std::to_string(format) + " is not modelled");
  }

  /// Block-scaled MFMA (CDNA4 ISA, v_mfma_scale_f32_{32x32x64,16x16x128}_f8f6f4; the
  /// register layouts as AMD's ROCm matrix-core article and CK's MX tests give them):
  /// operands (A, B, C, A format, B format, A scale byte select, A scale, B scale byte
  /// select, B scale). With g = l / M and G = 64 / M, lane l holds 32 elements of row (A) or
  /// column (B) l % M: fp6/bf6/fp4 one run, K = 32g + e; fp8/bf8 two runs of 16,
  /// K = 16g + e % 16 + 16G·(e / 16). Scales do not follow the data: the e8m0 scale
  /// 2^(s - 127) of row (column) i and K block b is the selected byte of lane i + M·b's scale
  /// operand. Accumulators as in the unscaled MFMA.
  void scaledMfma(Operation *op, uint32_t first, uint32_t size, SmallVector<Bits> &results) {
    requireFullWave(op, first, size);
    const StringRef n = name(op);
    const unsigned m = n.contains("32x32x64") ? 32 : n.contains("16x16x128") ? 16 : 0;
    if (!m || op->getNumOperands() != 9)
      fault(n.str() + " is not a block-scaled MFMA the emulator models");
    const unsigned k = m == 32 ? 64 : 128, perLane = 32, groups = 64 / m;
    Lane &lane0 = lanes[first];
    const int64_t formatA = int64_t(get(lane0, op->getOperand(3))[0]),
                  formatB = int64_t(get(lane0, op->getOperand(4))[0]);
    const unsigned selectA = unsigned(get(lane0, op->getOperand(5))[0]) & 3,
                   selectB = unsigned(get(lane0, op->getOperand(7))[0]) & 3;
    auto width = [](int64_t format) { return format == 4 ? 4u : format == 2 || format == 3 ? 6u : 8u; };
    // The K index of element e of a lane in group g.
    auto kOf = [&](int64_t format, unsigned g, unsigned e) {
      return width(format) == 8 ? 16 * g + e % 16 + 16 * groups * (e / 16) : 32 * g + e;
    };
    auto scale = [](uint64_t word, unsigned select) {
      const uint64_t e = (word >> (8 * select)) & 0xff;
      return e == 0xff ? std::nan("") : std::ldexp(1.0, int(e) - 127);
    };
    // scaleA[i][b], scaleB[j][b]: from lane i + M·b.
    std::vector<double> scaleA(m * groups), scaleB(m * groups);
    for (uint32_t l = 0; l < 64; ++l) {
      scaleA[(l % m) * groups + l / m] = scale(get(lanes[first + l], op->getOperand(6))[0], selectA);
      scaleB[(l % m) * groups + l / m] = scale(get(lanes[first + l], op->getOperand(8))[0], selectB);
    }
    std::vector<double> a(m * k), b(k * m);
    for (uint32_t l = 0; l < 64; ++l) {
      Lane &lane = lanes[first + l];
      auto aCodes = codes(get(lane, op->getOperand(0)), op->getOperand(0).getType(), width(formatA));
      auto bCodes = codes(get(lane, op->getOperand(1)), op->getOperand(1).getType(), width(formatB));
      if (aCodes.size() < perLane || bCodes.size() < perLane)
        fault(n.str() + ": operands hold fewer than 32 elements per lane");
      const unsigned row = l % m, g = l / m;
      for (unsigned e = 0; e < perLane; ++e) {
        const unsigned ka = kOf(formatA, g, e), kb = kOf(formatB, g, e);
        a[row * k + ka] = decodeScaled(aCodes[e], formatA) * scaleA[row * groups + ka / 32];
        b[kb * m + row] = decodeScaled(bCodes[e], formatB) * scaleB[row * groups + kb / 32];
      }
    }
    for (uint32_t l = 0; l < 64; ++l) {
      Bits acc = get(lanes[first + l], op->getOperand(2));
      for (unsigned r = 0; r < m * m / 64; ++r) {
        unsigned row = m == 32 ? 8 * (r / 4) + 4 * (l / 32) + r % 4 : 4 * (l / 16) + r, col = l % m;
        double sum = 0;
        for (unsigned i = 0; i < k; ++i)
          sum += a[row * k + i] * b[i * m + col];
        acc[r] = std::bit_cast<uint32_t>(float(double(std::bit_cast<float>(uint32_t(acc[r]))) + sum));
      }
      results[l] = acc;
    }
  }

  /// ldmatrix (PTX ISA): thread t gives the address of row t % 8 of matrix t / 8; for each
  /// matrix, thread t receives row t / 4, columns 2·(t % 4) and 2·(t % 4) + 1 (with .trans
  /// rows 2·(t % 4) and 2·(t % 4) + 1 of column t / 4), the lower column (row) in the low half.
  void ldmatrix(NVVM::LdMatrixOp op, uint32_t first, uint32_t size, SmallVector<Bits> &results) {
    requireFullWave(op, first, size);
    if (op.getShape().getM() != 8 || op.getShape().getN() != 8 || op.getEltType() != NVVM::LdStMatrixEltType::B16)
      fault("ldmatrix shapes other than m8n8 of b16 are not modelled");
    const uint32_t matrices = op.getNum();
    const bool trans = op.getLayout() == NVVM::MMALayout::col;
    // matrix[m][row][col]
    std::vector<uint16_t> data(matrices * 64);
    for (uint32_t m = 0; m < matrices; ++m)
      for (uint32_t row = 0; row < 8; ++row) {
        uint64_t address = get(lanes[first + 8 * m + row], op.getPtr())[0];
        std::memcpy(&data[m * 64 + row * 8], sharedRead(address, 16, "ldmatrix row read"), 16);
      }
    for (uint32_t t = 0; t < 32; ++t) {
      Bits regs;
      for (uint32_t m = 0; m < matrices; ++m) {
        uint32_t r0 = t / 4, c0 = 2 * (t % 4);
        uint16_t lo = trans ? data[m * 64 + c0 * 8 + r0] : data[m * 64 + r0 * 8 + c0];
        uint16_t hi = trans ? data[m * 64 + (c0 + 1) * 8 + r0] : data[m * 64 + r0 * 8 + c0 + 1];
        regs.push_back(uint32_t(lo) | uint32_t(hi) << 16);
      }
      results[t] = regs;
    }
  }

  /// mma.sync m16n8k16 (bf16, f16) and m16n8k32 (e4m3, e5m2 with f32 accumulators; s8 with s32
  /// ones, wrapping), row.col (PTX ISA fragment tables). groupID g = lane / 4, t = lane % 4,
  /// E elements per 32-bit register: A element i of a lane: row g + 8·((i / E) % 2), column
  /// E·t + i % E + (K / 2)·(i / (2E)); B element i: row E·t + i % E + (K / 2)·(i / E), column g;
  /// C element i: row g + 8·(i / 2), column 2·t + i % 2.
  void mmaSync(Operation *op, uint32_t first, uint32_t size, SmallVector<Bits> &results) {
    requireFullWave(op, first, size);
    unsigned k;
    StringRef kind, kindB;
    SmallVector<Value> aRegs, bRegs, cRegs;
    if (auto mma = dyn_cast<NVVM::MmaOp>(op)) {
      if (mma.getShape().getM() != 16 || mma.getShape().getN() != 8 || mma.getLayoutA() != NVVM::MMALayout::row ||
          mma.getLayoutB() != NVVM::MMALayout::col)
        fault("mma.sync shapes other than m16n8 row.col are not modelled");
      k = mma.getShape().getK();
      auto type = mma.getMultiplicandAPtxType();
      kind = kindB = type == NVVM::MMATypes::bf16  ? "bf16"
                     : type == NVVM::MMATypes::f16 ? "f16"
                     : type == NVVM::MMATypes::s8  ? "i8"
                                                   : "";
      if (kind == "i8" && mma.getIntOverflowBehavior() != NVVM::MMAIntOverflow::wrapped)
        fault("mma.sync s8 is modelled with wrapping s32 sums only");
      aRegs.append(mma.getOperandA().begin(), mma.getOperandA().end());
      bRegs.append(mma.getOperandB().begin(), mma.getOperandB().end());
      cRegs.append(mma.getOperandC().begin(), mma.getOperandC().end());
    } else {
      // llvm.nvvm.mma.m16n8k32.row.col.f32.<A>.<B>.f32 with A, B in {e4m3, e5m2}
      StringRef intrinsic = cast<LLVM::CallIntrinsicOp>(op).getIntrin();
      StringRef types = intrinsic;
      if (!types.consume_front("llvm.nvvm.mma.m16n8k32.row.col.f32.") || !types.consume_back(".f32"))
        fault(intrinsic.str() + " is not modelled");
      std::tie(kind, kindB) = types.split('.');
      if ((kind != "e4m3" && kind != "e5m2") || (kindB != "e4m3" && kindB != "e5m2"))
        fault(intrinsic.str() + " is not modelled");
      k = 32;
      auto operands = op->getOperands();
      aRegs.append(operands.begin(), operands.begin() + 4);
      bRegs.append(operands.begin() + 4, operands.begin() + 6);
      cRegs.append(operands.begin() + 6, operands.end());
    }
    const bool integer = kind == "i8";
    if (kind.empty() || cRegs[0].getType() != (integer ? Type(IntegerType::get(op->getContext(), 32))
                                                       : Type(Float32Type::get(op->getContext()))))
      fault("mma.sync operand types other than bf16, f16, e4m3 and e5m2 with f32 accumulators, and s8 with s32 "
            "ones, are not modelled");
    const unsigned width = kind == "bf16" || kind == "f16" ? 16 : 8, perReg = 32 / width;
    std::vector<double> a(16 * k), b(k * 8);
    for (uint32_t lane = 0; lane < 32; ++lane) {
      const uint32_t g = lane / 4, t = lane % 4;
      SmallVector<uint64_t, 16> aCodes, bCodes;
      for (Value v : aRegs)
        aCodes.append(codes(get(lanes[first + lane], v), v.getType(), width));
      for (Value v : bRegs)
        bCodes.append(codes(get(lanes[first + lane], v), v.getType(), width));
      for (unsigned i = 0; i < aCodes.size(); ++i) {
        unsigned row = g + 8 * ((i / perReg) % 2), col = perReg * t + i % perReg + (k / 2) * (i / (2 * perReg));
        a[row * k + col] = decode(aCodes[i], kind);
      }
      for (unsigned i = 0; i < bCodes.size(); ++i) {
        unsigned row = perReg * t + i % perReg + (k / 2) * (i / perReg);
        b[row * 8 + g] = decode(bCodes[i], kindB);
      }
    }
    for (uint32_t lane = 0; lane < 32; ++lane) {
      const uint32_t g = lane / 4, t = lane % 4;
      Bits out;
      for (unsigned i = 0; i < 4; ++i) {
        unsigned row = g + 8 * (i / 2), col = 2 * t + i % 2;
        double sum = 0; // exact for s8: |sum| < 2^19
        for (unsigned e = 0; e < k; ++e)
          sum += a[row * k + e] * b[e * 8 + col];
        const uint32_t c = uint32_t(get(lanes[first + lane], cRegs[i])[0]);
        out.push_back(integer ? c + uint32_t(int32_t(sum))
                              : std::bit_cast<uint32_t>(float(double(std::bit_cast<float>(c)) + sum)));
      }
      results[lane] = out;
    }
  }

  /// The LDS byte of element (row, K byte `kByte`) of a K-major wgmma operand, from its
  /// matrix descriptor (PTX ISA, "Matrix Descriptor Format" and the K-major shared memory
  /// layouts): start address (bits 0-13), leading byte offset (16-29) and stride byte
  /// offset (32-45), all in 16-byte units, base offset (49-51), swizzle mode (62-63: 0 none,
  /// 1 128-byte, 2 64-byte, 3 32-byte). Without swizzle, 8x16-byte core matrices: rows 16
  /// bytes apart, core matrices LBO apart along K and SBO apart along rows. Swizzled with
  /// width W: rows W bytes apart, 8-row groups SBO apart, and address bits [4, 4 + b) XOR
  /// bits [7, 7 + b), b = log2(W / 16).
  uint64_t wgmmaOperandByte(uint64_t descriptor, uint32_t row, uint32_t kByte) {
    const uint64_t start = (descriptor & 0x3fff) << 4, leading = ((descriptor >> 16) & 0x3fff) << 4,
                   stride = ((descriptor >> 32) & 0x3fff) << 4, mode = descriptor >> 62;
    if ((descriptor >> 49) & 7)
      fault("wgmma descriptors with a matrix base offset are not modelled");
    if (mode == 0)
      return start + (row / 8) * stride + (kByte / 16) * leading + (row % 8) * 16 + kByte % 16;
    const unsigned bits = 4 - unsigned(mode); // 128-byte: 3, 64-byte: 2, 32-byte: 1
    const uint32_t width = 16u << bits;
    if (kByte >= width)
      fault("wgmma K-major operands wider than their swizzle (" + std::to_string(width) + " bytes) are not modelled");
    const uint64_t linear = start + (row / 8) * stride + (row % 8) * width + kByte;
    return linear ^ (((linear >> 7) & ((1u << bits) - 1)) << 4);
  }

  /// wgmma.mma_async m64nNkK with A and B from shared memory (PTX ISA, asynchronous
  /// warpgroup-level matrix instructions): D = A·B + (scale-d ? D : 0), A row-major (K-major)
  /// and B column-major (each column K-major), imm-scale-a/b negating. Descriptors must agree
  /// across the warpgroup. Accumulator element i of thread t (warp w = t / 32, g = (t % 32) / 4,
  /// q = t % 4): row 16·w + g + 8·((i / 2) % 2), column 8·(i / 4) + 2·q + i % 2. Products are
  /// summed exactly and added to D once (s8 products into wrapping s32 accumulators).
  void warpgroupMma(NVVM::WgmmaMmaAsyncOp op, uint32_t first, uint32_t size, SmallVector<Bits> &results) {
    if (size != kWarpgroupThreads)
      fault("wgmma needs the 128 threads of a warpgroup");
    for (uint32_t t = 0; t < size; ++t)
      if (lanes[first + t].state == LaneState::Done)
        fault("thread " + std::to_string(t) + " of the warpgroup has exited before wgmma");
    const uint32_t m = op.getShape().getM(), n = op.getShape().getN(), k = op.getShape().getK();
    const bool integer = op.getTypeD() == NVVM::WGMMATypes::s32;
    if (m != 64 || (op.getTypeD() != NVVM::WGMMATypes::f32 && !integer) || op.getLayoutA() != NVVM::MMALayout::row ||
        op.getLayoutB() != NVVM::MMALayout::col || (integer && op.getSatfinite()))
      fault("wgmma other than m64 with f32 (or wrapping s32) accumulators and untransposed shared operands is not "
            "modelled");
    auto kindOf = [&](NVVM::WGMMATypes type) -> StringRef {
      StringRef kind = stringifyWGMMATypes(type); // the PTX spelling, as decode() takes it
      if (integer ? kind != "s8" : kind != "bf16" && kind != "f16" && kind != "e4m3" && kind != "e5m2")
        fault("wgmma operands of type " + kind.str() + " with " + (integer ? "s32" : "f32") +
              " accumulators are not modelled");
      return kind == "s8" ? "i8" : kind;
    };
    const StringRef kindA = kindOf(op.getTypeA()), kindB = kindOf(op.getTypeB());
    auto bytesOf = [](StringRef kind) -> uint32_t { return kind == "bf16" || kind == "f16" ? 2 : 1; };
    const uint32_t bytesA = bytesOf(kindA), bytesB = bytesOf(kindB);
    const uint64_t descA = get(lanes[first], op.getDescriptorA())[0], descB = get(lanes[first], op.getDescriptorB())[0];
    for (uint32_t t = 1; t < size; ++t)
      if (get(lanes[first + t], op.getDescriptorA())[0] != descA ||
          get(lanes[first + t], op.getDescriptorB())[0] != descB)
        fault("wgmma descriptors differ between threads 0 and " + std::to_string(t) + " of the warpgroup");
    // The bytes each operand spans, which stay read until the group is retired.
    WarpgroupRead spans[2];
    for (WarpgroupRead &span : spans)
      span = {first / kWarpgroupThreads, lanes[first].wgmmaGroups, ~uint64_t(0), 0};
    auto element = [&](uint64_t descriptor, uint32_t row, uint32_t kIndex, uint32_t bytes, StringRef kind) {
      const uint64_t offset = wgmmaOperandByte(descriptor, row, kIndex * bytes);
      WarpgroupRead &span = spans[descriptor == descA ? 0 : 1];
      span.begin = std::min(span.begin, offset);
      span.end = std::max(span.end, offset + bytes);
      const uint8_t *at = sharedRead(offset, bytes, "wgmma operand read");
      return decode(bytes == 1 ? uint64_t(at[0]) : uint64_t(at[0]) | uint64_t(at[1]) << 8, kind);
    };
    const double scaleA = op.getScaleA() == NVVM::WGMMAScaleIn::neg ? -1 : 1;
    const double scaleB = op.getScaleB() == NVVM::WGMMAScaleIn::neg ? -1 : 1;
    std::vector<double> a(m * k), b(n * k);
    for (uint32_t row = 0; row < m; ++row)
      for (uint32_t e = 0; e < k; ++e)
        a[row * k + e] = scaleA * element(descA, row, e, bytesA, kindA);
    for (uint32_t col = 0; col < n; ++col)
      for (uint32_t e = 0; e < k; ++e)
        b[col * k + e] = scaleB * element(descB, col, e, bytesB, kindB);
    warpgroupReads.append(std::begin(spans), std::end(spans));
    const bool accumulate = op.getScaleD() == NVVM::WGMMAScaleOut::one;
    for (uint32_t t = 0; t < size; ++t) {
      const uint32_t w = t / 32, g = (t % 32) / 4, q = t % 4;
      const Bits &c = get(lanes[first + t], op.getInouts());
      if (c.size() != n / 2)
        fault("wgmma m64n" + std::to_string(n) + " needs " + std::to_string(n / 2) + " accumulators per thread");
      Bits out;
      for (uint32_t i = 0; i < n / 2; ++i) {
        const uint32_t row = 16 * w + g + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * q + i % 2;
        double sum = 0; // exact for s8: |sum| < 2^19
        for (uint32_t e = 0; e < k; ++e)
          sum += a[row * k + e] * b[col * k + e];
        if (integer) {
          out.push_back((accumulate ? uint32_t(c[i]) : 0u) + uint32_t(int32_t(sum)));
          continue;
        }
        const float acc = accumulate ? std::bit_cast<float>(uint32_t(c[i])) : 0.0f;
        out.push_back(std::bit_cast<uint32_t>(float(double(acc) + sum)));
      }
      results[t] = out;
    }
  }

  /// LDS DMA (global_load_lds, buffer_load ... lds; AMD ISA): each lane loads `size` bytes
  /// from its own global address (for buffers: base + voffset + soffset + offset, range-
  /// checked, out of range writes 0) and the wave's data lands contiguously in LDS: lane l's
  /// at M0 + offset + l·size, where M0 is the first active lane's LDS address operand.
  void ldsDma(Operation *op, uint32_t first, uint32_t size) {
    auto global = dyn_cast<ROCDL::GlobalLoadLDSOp>(op);
    auto buffer = dyn_cast<ROCDL::RawPtrBufferLoadLdsOp>(op);
    uint32_t firstActive = 0;
    while (lanes[first + firstActive].state == LaneState::Done)
      ++firstActive;
    Lane &leader = lanes[first + firstActive];
    const uint64_t m0 = get(leader, global ? global.getLdsPtr() : buffer.getLdsPtr())[0];
    const uint64_t bytes = global ? global.getSize() : get(leader, buffer.getSize())[0];
    const uint64_t offset = global ? uint64_t(global.getOffset()) : get(leader, buffer.getOffset())[0] & 0xffffffff;
    if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 12 && bytes != 16)
      fault("LDS DMA of " + std::to_string(bytes) + " bytes per lane");
    for (uint32_t l = 0; l < size; ++l) {
      Lane &lane = lanes[first + l];
      if (lane.state == LaneState::Done)
        continue;
      uint8_t *dst = shared(m0 + offset + uint64_t(l) * bytes, bytes, "LDS DMA write");
      if (global) {
        std::memcpy(dst, this->global(get(lane, global.getGlobalPtr())[0] + offset, bytes, "LDS DMA read"), bytes);
        continue;
      }
      Bits loaded;
      Type type = VectorType::get({int64_t(bytes)}, IntegerType::get(op->getContext(), 8));
      bufferAccess(get(lane, buffer.getRsrc()), get(lane, buffer.getVoffset())[0] + offset,
                   get(lane, buffer.getSoffset())[0], type, &loaded, nullptr);
      for (uint64_t i = 0; i < bytes; ++i)
        dst[i] = uint8_t(loaded[i]);
    }
  }

  /// The lane DPP_CTRL `ctrl` reads for lane `l`, or -1 when it names none (AMD ISA, DPP).
  static int64_t dppSource(uint32_t ctrl, uint32_t l, uint32_t size) {
    const uint32_t rowBase = l / 16 * 16, inRow = l % 16;
    if (ctrl <= 0xff) // quad_perm: two bits per lane of the quad
      return l / 4 * 4 + ((ctrl >> (2 * (l % 4))) & 3);
    if (ctrl >= 0x101 && ctrl <= 0x10f) { // row_shl
      uint32_t s = inRow + (ctrl & 0xf);
      return s < 16 ? int64_t(rowBase + s) : -1;
    }
    if (ctrl >= 0x111 && ctrl <= 0x11f) { // row_shr
      int64_t s = int64_t(inRow) - (ctrl & 0xf);
      return s >= 0 ? int64_t(rowBase) + s : -1;
    }
    if (ctrl >= 0x121 && ctrl <= 0x12f) // row_ror
      return rowBase + (inRow + 16 - (ctrl & 0xf)) % 16;
    switch (ctrl) {
    case 0x130: // wave_shl1
      return l + 1 < size ? int64_t(l + 1) : -1;
    case 0x134: // wave_rol1
      return (l + 1) % size;
    case 0x138: // wave_shr1
      return l >= 1 ? int64_t(l - 1) : -1;
    case 0x13c: // wave_ror1
      return (l + size - 1) % size;
    case 0x140: // row_mirror
      return rowBase + 15 - inRow;
    case 0x141: // row_half_mirror
      return rowBase + inRow / 8 * 8 + 7 - inRow % 8;
    case 0x142: // row_bcast15: lane 15 of the previous row, into the next row
      return l >= 16 ? int64_t(rowBase - 1) : -1;
    case 0x143: // row_bcast31: lane 31 into rows 2 and 3
      return l >= 32 ? 31 : -1;
    }
    fault("DPP control " + std::to_string(ctrl) + " is not modelled");
  }

  LLVM::LLVMFuncOp func;
  const GpuTarget &target;
  const KernelManifest &kernel;
  std::array<uint32_t, 3> group, grid;
  const std::vector<Allocation> &regions;
  const DenseMap<Operation *, uint64_t> &ldsOffsets;
  std::vector<uint8_t> lds;
  std::vector<uint16_t> copyTargets; // per LDS byte: issued cp.asyncs that have not landed
  DataLayout layout;
  std::vector<Lane> lanes;
  SmallVector<WarpgroupRead> warpgroupReads;
};

} // namespace

EmulatedModule::EmulatedModule(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EmulatedModule::~EmulatedModule() = default;

std::unique_ptr<EmulatedModule> EmulatedModule::compile(const Module &module, const GpuTarget &target,
                                                        std::string *error) {
  auto lowered = lowerKernelsForEmulation(module, target, error);
  if (!lowered)
    return nullptr;
  return fromLowered(lowered->image, std::move(lowered->manifest), target, error);
}

std::unique_ptr<EmulatedModule> EmulatedModule::fromLowered(std::string_view text, ModuleManifest manifest,
                                                            const GpuTarget &target, std::string *error) {
  auto impl = std::make_unique<Impl>();
  DialectRegistry registry;
  registry.insert<LLVM::LLVMDialect, ROCDL::ROCDLDialect, NVVM::NVVMDialect, gpu::GPUDialect, DLTIDialect>();
  impl->context = std::make_unique<MLIRContext>(registry);
  impl->context->allowUnregisteredDialects(false);
  impl->module = parseSourceString<ModuleOp>(llvm::StringRef(text.data(), text.size()), impl->context.get());
  if (!impl->module) {
    *error = "the emulator could not read the lowered module";
    return nullptr;
  }
  impl->manifest = std::move(manifest);
  impl->target = target;
  return std::make_unique<EmulatedModule>(std::move(impl));
}

const ModuleManifest &EmulatedModule::manifest() const { return impl_->manifest; }

bool EmulatedModule::launch(std::string_view kernelName, std::array<uint32_t, 3> grid,
                            const std::vector<KernelArg> &args, std::string *error) const {
  const KernelManifest *kernel = impl_->manifest.find(kernelName);
  if (!kernel) {
    *error = "no kernel '" + std::string(kernelName) + "' in the module";
    return false;
  }
  if (!checkLaunch(kernel->signature, grid, args.data(), args.size(), error))
    return false;
  LLVM::LLVMFuncOp func;
  impl_->module->walk([&](LLVM::LLVMFuncOp f) {
    if (f.getName() == StringRef(kernelName.data(), kernelName.size()) && !f.isExternal())
      func = f;
  });
  if (!func) {
    *error = "kernel '" + std::string(kernelName) + "' has no function in the lowered module";
    return false;
  }
  // Parameters: the user's arguments, then the grid size (KernelManifest::gridArguments).
  std::vector<Bits> params;
  std::vector<Allocation> regions;
  for (const KernelArg &arg : args) {
    switch (arg.kind) {
    case ArgKind::Pointer:
      if (!arg.extentBytes) {
        *error = "emulated launches need the extent of every pointer argument ('" +
                 kernel->signature.params[params.size()].name + "' has none)";
        return false;
      }
      regions.push_back({uint64_t(reinterpret_cast<uintptr_t>(arg.pointer)),
                         uint64_t(reinterpret_cast<uintptr_t>(arg.pointer)) + arg.extentBytes,
                         kernel->signature.params[params.size()].name});
      params.push_back({uint64_t(reinterpret_cast<uintptr_t>(arg.pointer))});
      break;
    case ArgKind::I32:
      params.push_back({uint64_t(uint32_t(arg.i32))});
      break;
    case ArgKind::I64:
      params.push_back({uint64_t(arg.i64)});
      break;
    case ArgKind::F32:
      params.push_back({std::bit_cast<uint32_t>(arg.f32)});
      break;
    case ArgKind::F64:
      params.push_back({std::bit_cast<uint64_t>(arg.f64)});
      break;
    }
  }
  for (uint32_t i = 0; i < kernel->gridArguments; ++i)
    params.push_back({grid[i]});
  if (params.size() != func.getNumArguments()) {
    *error = "kernel '" + std::string(kernelName) + "' takes " + std::to_string(func.getNumArguments()) +
             " parameters after lowering, the launch gives " + std::to_string(params.size());
    return false;
  }
  // LDS: each workgroup global at its own aligned offset; dynamic shared memory (a
  // zero-sized array) gets what the manifest asks for.
  DenseMap<Operation *, uint64_t> ldsOffsets;
  uint64_t ldsBytes = 0;
  func->getParentOp()->walk([&](LLVM::GlobalOp global) {
    if (global.getAddrSpace() != 3)
      return;
    uint64_t align = std::max<uint64_t>(global.getAlignment().value_or(16), 16);
    ldsBytes = (ldsBytes + align - 1) / align * align;
    ldsOffsets[global] = ldsBytes;
    auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
    uint64_t size = array ? DataLayout::closest(global).getTypeSize(array) : 0;
    ldsBytes += size ? size : kernel->dynamicSharedBytes;
  });
  try {
    for (uint32_t z = 0; z < grid[2]; ++z)
      for (uint32_t y = 0; y < grid[1]; ++y)
        for (uint32_t x = 0; x < grid[0]; ++x) {
          try {
            Workgroup(func, impl_->target, *kernel, {x, y, z}, grid, params, regions, ldsOffsets, ldsBytes).run();
          } catch (Fault &f) {
            f.message = "workgroup (" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) + ") " +
                        f.message;
            throw;
          }
        }
  } catch (Fault &f) {
    *error = "emulated " + std::string(impl_->target.name) + " kernel '" + std::string(kernelName) + "': " + f.message;
    return false;
  }
  return true;
}

namespace {

void *loadForDevice(std::string_view image, const ModuleManifest &manifest, std::string *error) {
  auto gpu = lookupGpuTarget(emulatedGpuTarget(manifest.target));
  if (!gpu) {
    *error = "emulated code object for unknown target '" + manifest.target + "'";
    return nullptr;
  }
  return EmulatedModule::fromLowered(image, manifest, *gpu, error).release();
}

void unloadForDevice(void *module) { delete static_cast<EmulatedModule *>(module); }

bool launchForDevice(void *module, std::string_view kernel, std::array<uint32_t, 3> grid, const KernelArg *args,
                     size_t count, std::string *error) {
  return static_cast<const EmulatedModule *>(module)->launch(kernel, grid, std::vector<KernelArg>(args, args + count),
                                                             error);
}

const EmulatorHooks kHooks{loadForDevice, unloadForDevice, launchForDevice};

} // namespace

std::unique_ptr<Device> wavetile::openEmulatedDevice(std::string_view target, std::string *error) {
  registerEmulator(&kHooks);
  return Device::openEmulated(target, error);
}
