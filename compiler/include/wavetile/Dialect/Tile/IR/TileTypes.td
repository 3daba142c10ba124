//===- TileTypes.td - tile dialect types ---------------------*- tablegen -*-===//
#ifndef WAVETILE_TILE_TYPES
#define WAVETILE_TILE_TYPES

include "wavetile/Dialect/Tile/IR/TileBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

class Tile_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Tile_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Tile_PtrType : Tile_Type<"Ptr", "ptr"> {
  let summary = "pointer to global memory holding elements of one scalar type";
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
  let genVerifyDecl = 1;
}

def Tile_BufferType : Tile_Type<"Buffer", "buffer"> {
  let summary = "bounded view of global memory: out-of-range loads read 0, stores are dropped";
  let description = [{
    Created by `tile.make_buffer` from a pointer and an element count. Offsets are 32-bit
    element offsets, read as unsigned. On AMD this is a hardware buffer resource.
  }];
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
  let genVerifyDecl = 1;
}

def Tile_SharedType : Tile_Type<"Shared", "shared", [ShapedTypeInterface]> {
  let summary = "a buffer in shared memory (LDS), with an optional shared layout";
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape, "::mlir::Type":$elementType,
                        "::mlir::Attribute":$encoding);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    using ::mlir::ShapedType::Trait<SharedType>::getElementTypeBitWidth;
    using ::mlir::ShapedType::Trait<SharedType>::getRank;
    using ::mlir::ShapedType::Trait<SharedType>::getNumElements;
    using ::mlir::ShapedType::Trait<SharedType>::hasStaticShape;
    bool hasRank() const { return true; }
    SharedType cloneWith(std::optional<::llvm::ArrayRef<int64_t>> shape, ::mlir::Type elementType) const;
    /// The type of one entry along dimension 0 (what shared_slice returns): the shape less
    /// dimension 0, and the layout less dimension 0. Null when the layout's swizzle or
    /// padding involves dimension 0, which an entry cannot express.
    SharedType entryType() const;
  }];
  let builders = [
    TypeBuilderWithInferredContext<(ins "::llvm::ArrayRef<int64_t>":$shape, "::mlir::Type":$elementType,
        CArg<"::mlir::Attribute", "{}">:$encoding), [{
      return $_get(elementType.getContext(), shape, elementType, encoding);
    }]>
  ];
}

def Tile_AsyncTokenType : Tile_Type<"AsyncToken", "async_token"> {
  let summary = "completion token of an asynchronous global-to-shared copy";
}

#endif
