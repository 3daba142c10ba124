//===- CanonicalText.cpp - IR text independent of building order ----------===//
//
// Two front ends (the C++ DSL, the Python one) build the same kernel with the same
// operations, but evaluate independent sub-expressions in different orders (C++ leaves the
// order of operands unspecified; Python goes left to right). Module::canonicalStr prints the
// IR with each block's operations in one order determined by their structure alone: a
// topological order of the SSA uses and of memory effects (writes stay in place relative to
// every other access, reads relative to writes), taking the structurally smallest ready
// operation first (by what it is and what it uses, named by their canonical positions).
//
//===----------------------------------------------------------------------===//

#include "wavetile/Compiler.h"

#include "wavetile/Pipeline/ModuleImpl.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace wavetile;

namespace {

/// Structural keys: equal for operations built the same way from equal operands.
class Canonicalizer {
public:
  void canonicalize(mlir::Region &region) {
    for (mlir::Block &block : region)
      canonicalize(block);
  }

private:
  enum class Access { None, Read, Write };

  static Access accessOf(mlir::Operation *op) {
    if (mlir::isMemoryEffectFree(op))
      return Access::None;
    if (auto effects = mlir::dyn_cast<mlir::MemoryEffectOpInterface>(op)) {
      llvm::SmallVector<mlir::MemoryEffects::EffectInstance> list;
      effects.getEffects(list);
      bool writes = llvm::any_of(list, [](const auto &e) { return !mlir::isa<mlir::MemoryEffects::Read>(e.getEffect()); });
      return writes ? Access::Write : Access::Read;
    }
    return Access::Write; // unknown effects (loops and branches with accesses inside)
  }

  /// A value by where it sits in the canonical order: a block argument by its block's depth
  /// and number, a result by its op's position.
  std::string label(mlir::Value v) {
    if (auto arg = mlir::dyn_cast<mlir::BlockArgument>(v))
      return "a" + std::to_string(depthOf(arg.getOwner())) + "." + std::to_string(arg.getArgNumber());
    auto result = mlir::cast<mlir::OpResult>(v);
    return labels.lookup(result.getOwner()) + "#" + std::to_string(result.getResultNumber());
  }

  static unsigned depthOf(mlir::Block *block) {
    unsigned depth = 0;
    for (mlir::Operation *op = block->getParentOp(); op; op = op->getParentOp())
      ++depth;
    return depth;
  }

  /// The op's structure: what it is and what it uses (operands by their canonical labels,
  /// regions by their canonicalized contents). Needs every operand's producer placed.
  const std::string &keyOf(mlir::Operation *op) {
    if (auto it = keys.find(op); it != keys.end())
      return it->second;
    std::string key;
    llvm::raw_string_ostream os(key);
    os << op->getName() << " " << op->getAttrDictionary() << " ->";
    for (mlir::Type t : op->getResultTypes())
      os << " " << t;
    os << " (";
    for (mlir::Value operand : op->getOperands())
      os << label(operand) << ",";
    os << ")";
    for (mlir::Region &region : op->getRegions()) {
      canonicalize(region);
      os << "{";
      for (mlir::Block &block : region)
        for (mlir::Operation &inner : block)
          os << keyOf(&inner) << ";";
      os << "}";
    }
    return keys[op] = os.str();
  }

  void canonicalize(mlir::Block &block) {
    if (block.empty())
      return;
    mlir::Operation *terminator = block.mightHaveTerminator() ? block.getTerminator() : nullptr;
    std::vector<mlir::Operation *> ops;
    for (mlir::Operation &op : block)
      if (&op != terminator)
        ops.push_back(&op);
    // Dependencies within the block: SSA uses (also from inside nested regions) and memory.
    llvm::DenseMap<mlir::Operation *, unsigned> index;
    for (unsigned i = 0; i < ops.size(); ++i)
      index[ops[i]] = i;
    std::vector<std::vector<unsigned>> users(ops.size());
    std::vector<unsigned> waiting(ops.size(), 0);
    auto depend = [&](unsigned from, unsigned to) {
      users[from].push_back(to);
      ++waiting[to];
    };
    int lastWrite = -1;
    std::vector<unsigned> readsSinceWrite;
    for (unsigned i = 0; i < ops.size(); ++i) {
      llvm::SmallPtrSet<mlir::Operation *, 8> producers;
      ops[i]->walk([&](mlir::Operation *nested) {
        for (mlir::Value operand : nested->getOperands())
          if (mlir::Operation *def = operand.getDefiningOp(); def && def->getBlock() == &block && def != ops[i])
            producers.insert(def);
      });
      for (mlir::Operation *p : producers)
        depend(index[p], i);
      Access access = accessOf(ops[i]);
      if (access == Access::Write) {
        if (lastWrite >= 0)
          depend(unsigned(lastWrite), i);
        for (unsigned r : readsSinceWrite)
          depend(r, i);
        readsSinceWrite.clear();
        lastWrite = int(i);
      } else if (access == Access::Read) {
        if (lastWrite >= 0)
          depend(unsigned(lastWrite), i);
        readsSinceWrite.push_back(i);
      }
    }
    // Ready operations by structure, then original position; each placed op gets its label.
    std::multimap<std::pair<std::string, unsigned>, unsigned> ready;
    auto makeReady = [&](unsigned i) { ready.emplace(std::pair{keyOf(ops[i]), i}, i); };
    for (unsigned i = 0; i < ops.size(); ++i)
      if (!waiting[i])
        makeReady(i);
    std::vector<mlir::Operation *> order;
    std::string prefix = "o" + std::to_string(depthOf(&block)) + ".";
    while (!ready.empty()) {
      unsigned i = ready.begin()->second;
      ready.erase(ready.begin());
      labels[ops[i]] = prefix + std::to_string(order.size());
      order.push_back(ops[i]);
      for (unsigned u : users[i])
        if (--waiting[u] == 0)
          makeReady(u);
    }
    if (terminator)
      labels[terminator] = prefix + "end";
    for (mlir::Operation *op : order)
      op->moveBefore(&block, block.end());
    if (terminator)
      terminator->moveBefore(&block, block.end());
  }

  llvm::DenseMap<mlir::Operation *, std::string> keys, labels;
};

} // namespace

std::string Module::canonicalStr() const {
  mlir::OwningOpRef<mlir::ModuleOp> copy(impl_->module.get().clone());
  Canonicalizer().canonicalize(copy->getBodyRegion());
  std::string text;
  llvm::raw_string_ostream os(text);
  copy->print(os);
  return text;
}
