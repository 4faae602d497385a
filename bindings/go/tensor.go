package tl

import (
	"runtime"
	"unsafe"

	"github.com/tensorlife/tensorlife/bindings/go/internal/raw"
)

// Tensor is a value handle.  It stays valid until its scope is reset or closed (then every
// use returns ErrStorageClosed) or, for an ambient tensor, until Free.  The zero Tensor is
// "none" where an op takes an optional operand.
type Tensor struct {
	ctx  *Context
	bits uint64
}

// live refuses the zero Tensor, which belongs to no Context.
func (t Tensor) live() error {
	if t.ctx == nil {
		return refuse(ErrInvalidHandle, "the zero Tensor is no tensor")
	}
	return nil
}

// FromFloat32 copies data (len must equal the shape's element count) into a new tensor in
// the current target.
func (ctx *Context) FromFloat32(shape []int64, data []float32) (Tensor, error) {
	return ctx.made(raw.Tlb_from_f32(ctx.c, shape, data))
}

// FromFloat64 is FromFloat32 for float64 data.
func (ctx *Context) FromFloat64(shape []int64, data []float64) (Tensor, error) {
	return ctx.made(raw.Tlb_from_f64(ctx.c, shape, data))
}

// FromInt32 is FromFloat32 for int32 data.
func (ctx *Context) FromInt32(shape []int64, data []int32) (Tensor, error) {
	return ctx.made(raw.Tlb_from_i32(ctx.c, shape, data))
}

// Zeros, Ones and Full make a tensor of dt with every element set.  For Int32, Full's value
// must be an integer in int32 range.
func (ctx *Context) Zeros(dt DType, shape ...int64) (Tensor, error) {
	return ctx.made(raw.Tlb_fill(ctx.c, int(dt), shape, 0, 0))
}
func (ctx *Context) Ones(dt DType, shape ...int64) (Tensor, error) {
	return ctx.made(raw.Tlb_fill(ctx.c, int(dt), shape, 1, 0))
}
func (ctx *Context) Full(dt DType, value float64, shape ...int64) (Tensor, error) {
	return ctx.made(raw.Tlb_fill(ctx.c, int(dt), shape, 2, value))
}

// CMemory is memory from C's allocator, which C may keep (cgo forbids C keeping Go memory):
// what Wrap takes.  It is freed by Free, or by the collector once nothing refers to it; a
// Context keeps the CMemory its tensors wrap.
type CMemory struct {
	p unsafe.Pointer
	n int64
}

// AllocCMemory is n zeroed bytes of C memory.
func AllocCMemory(n int64) (*CMemory, error) {
	p := raw.CAlloc(n)
	if p == nil {
		return nil, refuse(ErrOutOfMemory, "C memory of that size could not be had")
	}
	m := &CMemory{p, n}
	runtime.SetFinalizer(m, func(m *CMemory) { raw.CFree(m.p) })
	return m, nil
}

// Bytes is the memory as a Go slice (valid while m is).
func (m *CMemory) Bytes() []byte { return unsafe.Slice((*byte)(m.p), m.n) }

// Float32s is the memory as float32s.
func (m *CMemory) Float32s() []float32 { return unsafe.Slice((*float32)(m.p), m.n/4) }

// Wrap makes a tensor over m with no copy (weights shared read-only, or mapped).  The
// shape's bytes must be exactly m's size; m lives as long as the Context.
func (ctx *Context) Wrap(dt DType, shape []int64, m *CMemory) (Tensor, error) {
	t, err := ctx.made(raw.Tlb_wrap(ctx.c, int(dt), shape, m.p, m.n))
	if err == nil {
		ctx.pinned = append(ctx.pinned, m)
	}
	return t, err
}

// Info is the whole tl_tensor_info of a tensor.
type Info struct {
	DType      DType
	Shape      []int64
	Strides    []int64 // in elements
	Offset     int64   // elements from the start of its storage
	Storage    string  // the scope's name, or "ambient"
	Generation uint64  // the scope generation it belongs to; 0 for ambient
	Count      int64   // elements
	ReadOnly   bool    // over a read-only mapping: never write through its memory
}

// Info reads the tensor's dtype, shape, strides, offset and storage.
func (t Tensor) Info() (Info, error) {
	if err := t.live(); err != nil {
		return Info{}, err
	}
	v := make([]int64, infoSlots)
	if err := t.ctx.status(raw.Tlb_info(t.ctx.c, t.bits, v)); err != nil {
		return Info{}, err
	}
	n := v[infoNdim]
	return Info{DType(v[infoDtype]), append([]int64(nil), v[infoShape:infoShape+n]...),
		append([]int64(nil), v[infoStrides:infoStrides+n]...), v[infoOffset], raw.Tlb_storage(t.ctx.c, t.bits),
		uint64(v[infoGeneration]), v[infoCount], v[infoReadOnly] != 0}, nil
}

// readAll copies every element out; the tensor must be of the slice's dtype (the C layer
// refuses any other, so bits are never reinterpreted).
func readAll[T any](t Tensor, read func(uint64, uint64, []T) int) ([]T, error) {
	info, err := t.Info()
	if err != nil {
		return nil, err
	}
	v := make([]T, info.Count)
	return v, t.ctx.status(read(t.ctx.c, t.bits, v))
}

// Float32s, Float64s and Int32s copy the elements out in logical order.
func (t Tensor) Float32s() ([]float32, error) { return readAll(t, raw.Tlb_read_f32) }
func (t Tensor) Float64s() ([]float64, error) { return readAll(t, raw.Tlb_read_f64) }
func (t Tensor) Int32s() ([]int32, error)     { return readAll(t, raw.Tlb_read_i32) }

// ReadFloat32 copies the elements into dst, which must hold them all.
func (t Tensor) ReadFloat32(dst []float32) error {
	if err := t.live(); err != nil {
		return err
	}
	return t.ctx.status(raw.Tlb_read_f32(t.ctx.c, t.bits, dst))
}

// Free frees an ambient tensor; for a scoped one it only checks the handle.
func (t Tensor) Free() error {
	if err := t.live(); err != nil {
		return err
	}
	return t.ctx.status(raw.Tlb_free(t.ctx.c, t.bits))
}

// Retain copies t into target (an open scope), or into ambient memory when target is nil:
// the one way out of a scope.
func (t Tensor) Retain(target *Scope) (Tensor, error) {
	if err := t.live(); err != nil {
		return Tensor{}, err
	}
	var token uint64
	if target != nil {
		if target.ctx != t.ctx {
			return Tensor{}, refuse(ErrInvalidHandle, "the scope belongs to another Context")
		}
		token = target.token
	}
	return t.ctx.made(raw.Tlb_retain(t.ctx.c, t.bits, token))
}
