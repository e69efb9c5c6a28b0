#pragma once
// Non-temporal stores of a streamed output (KernelSpec::stream). A program
// output that no kernel reads and that is larger than the caches is better
// written without reading each line first: an ordinary store to a line not in
// the cache fetches it from memory (read for ownership), so writing such an
// output costs twice its bytes of memory traffic; a non-temporal store
// (movntps and friends) fills a write-combining buffer and sends the whole
// line. The bits are the same; only the cache state differs.
//
// The code generator tags the load of that output's pointer with
// !stax.stream and !align 64 (the runtime allocates such an output aligned
// and checks it before each call: CompiledProgram::run). After the loop
// vectoriser, the module pass "stax-stream-stores" (mark_stream_stores)
// marks !nontemporal every vector store into that output whose address is
// known to be aligned to the store's size (ValueTracking's known bits of
// the address: the pointer's !align, the row offsets, the vector loop's
// induction step), and ends each function that has one with an sfence, so
// that its stores are ordered before whatever the caller does next (another
// thread reading the output). A store not proved aligned stays as it is.
namespace llvm {
class Module;
}  // namespace llvm

namespace stax::backends::cpu {

/// The metadata kind of the tagged pointer load.
inline constexpr const char* kStreamMetadata = "stax.stream";
/// The alignment the runtime guarantees for a streamed output's storage.
inline constexpr int kStreamAlign = 64;

/// Marks the aligned vector stores into tagged outputs !nontemporal and
/// fences the functions that have one (x86-64 targets only; elsewhere it
/// does nothing). Returns how many stores it marked.
int mark_stream_stores(llvm::Module& m);

}  // namespace stax::backends::cpu
