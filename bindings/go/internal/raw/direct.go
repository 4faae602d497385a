package raw

/*
#include "tlb.h"
*/
import "C"
import "unsafe"

// asmcgocall runs fn(arg) on the system stack as cgo's calls do, without cgo's handoff of the
// processor to the scheduler around it: how the runtime calls the vDSO's clock, and kept
// reachable by go:linkname for packages that do the same.  Only for C that never waits and is
// short, which tlb_direct_binary is by contract (tlb.h).
//
//go:linkname asmcgocall runtime.asmcgocall
//go:noescape
func asmcgocall(fn, arg unsafe.Pointer) int32

// The elementwise ops Direct makes, by their place in TL_BINARY_OPS.
const (
	DirectAdd = int32(C.TLB_DIRECT_add)
	DirectSub = int32(C.TLB_DIRECT_sub)
	DirectMul = int32(C.TLB_DIRECT_mul)
	DirectDiv = int32(C.TLB_DIRECT_div)
)

// Direct makes a small elementwise op with a crossing of a few nanoseconds instead of cgo's
// tens; done is false when it did nothing (the record busy, or the result large), and the
// caller then makes the ordinary call.
func Direct(op int32, c, a, b uint64) (out uint64, done bool) {
	call := C.tlb_direct_call{c: C.uint64_t(c), a: C.uint64_t(a), b: C.uint64_t(b), op: C.int32_t(op)}
	asmcgocall(unsafe.Pointer(C.tlb_direct_binary), unsafe.Pointer(&call))
	return uint64(call.out), call.done != 0
}
