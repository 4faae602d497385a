// Package raw is the SWIG-generated layer over tensorlife's C ABI (tensorlife.go and
// tensorlife_wrap.c, generated from bindings/tl.i by bindings/go/generate.sh and committed, so
// that building needs no SWIG); the package tl above it is the API.  The C library is found
// through pkg-config (tensorlife.pc); installed outside the loader's paths, the program is
// linked with an rpath to that prefix (CGO_LDFLAGS), as for any C library.
package raw

/*
#cgo pkg-config: tensorlife
#include <stdlib.h>
*/
import "C"
import "unsafe"

// CAlloc is n zeroed bytes of C memory (nil when n is 0 or C is out of memory).
func CAlloc(n int64) unsafe.Pointer {
	if n <= 0 {
		return nil
	}
	return C.calloc(C.size_t(n), 1)
}

// CFree frees what CAlloc returned.
func CFree(p unsafe.Pointer) { C.free(p) }
