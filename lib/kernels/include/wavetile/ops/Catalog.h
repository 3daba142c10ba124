//===- Catalog.h - library kernels by textual specialization -----*- C++ -*-===//
//
// Every library kernel specialization has a name a tool can take, OP:DTYPE:HIDDEN[:FLAG...],
// e.g. "rmsnorm2d_fwd_with_add:bf16:7168:gemma" (flags: gemma, t5, a16). `wavetile compile --op`
// and AOT bundles build kernels from it.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_OPS_CATALOG_H
#define WAVETILE_OPS_CATALOG_H

#include "wavetile/ops/OpRuntime.h"

#include <string>
#include <string_view>

namespace wavetile::ops {

/// The module for `spec` on `target` (its warp size sizes the blocks), or null with an
/// error naming what is wrong with it.
std::unique_ptr<Module> buildOpKernel(std::string_view spec, std::string_view target, std::string *error);

/// The ops `buildOpKernel` knows, with their flags (for help texts; an error about a spec
/// gives only the syntax of the op family it names).
std::string opCatalogHelp();

} // namespace wavetile::ops

#endif
