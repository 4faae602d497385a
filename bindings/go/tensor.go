package tl

import (
	"fmt"

	"tensorlife/bindings/go/internal/raw"
)

// Tensor is a value handle.  It stays valid until its scope is reset or closed (then every
// use returns ErrStorageClosed) or, for an ambient tensor, until Free.
type Tensor struct {
	ctx  *Context
	bits uint64
}

// DType of a tensor.
type DType int

const (
	Float32 DType = 1
	Float64 DType = 2
	Int32   DType = 3
)

func (ctx *Context) made(f func(out []uint64) int) (Tensor, error) {
	if err := ctx.live(); err != nil {
		return Tensor{}, err
	}
	out := make([]uint64, 1)
	if err := call(func() int { return f(out) }); err != nil {
		return Tensor{}, err
	}
	return Tensor{ctx, out[0]}, nil
}

// FromFloat32 copies data (len must equal the shape's element count) into a new tensor in
// the current target.
func (ctx *Context) FromFloat32(shape []int64, data []float32) (Tensor, error) {
	return ctx.made(func(out []uint64) int { return raw.Tlb_from_f32(ctx.c, shape, data, out) })
}

// FromFloat64 is FromFloat32 for float64 data.
func (ctx *Context) FromFloat64(shape []int64, data []float64) (Tensor, error) {
	return ctx.made(func(out []uint64) int { return raw.Tlb_from_f64(ctx.c, shape, data, out) })
}

// FromInt32 is FromFloat32 for int32 data.
func (ctx *Context) FromInt32(shape []int64, data []int32) (Tensor, error) {
	return ctx.made(func(out []uint64) int { return raw.Tlb_from_i32(ctx.c, shape, data, out) })
}

// Info is the tensor's dtype and shape.
func (t Tensor) Info() (DType, []int64, error) {
	if err := t.ctx.live(); err != nil {
		return 0, nil, err
	}
	buf := make([]int64, 9)
	dt := make([]uint64, 1)
	if err := call(func() int { return raw.Tlb_shape(t.ctx.c, t.bits, buf, dt) }); err != nil {
		return 0, nil, err
	}
	return DType(dt[0]), append([]int64(nil), buf[1:1+buf[0]]...), nil
}

func (t Tensor) count(want DType) (int64, error) {
	dt, shape, err := t.Info()
	if err != nil {
		return 0, err
	}
	if dt != want {
		return 0, &Error{Status: raw.E_DTYPE, Message: fmt.Sprintf("tensor is dtype %d, not %d", dt, want)}
	}
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n, nil
}

// readAll copies every element out, once the tensor is checked to be of dtype want.
func readAll[T any](t Tensor, want DType, read func(raw.Tl_context, uint64, []T) int) ([]T, error) {
	n, err := t.count(want)
	if err != nil {
		return nil, err
	}
	v := make([]T, n)
	return v, call(func() int { return read(t.ctx.c, t.bits, v) })
}

// Float32s copies the elements out in logical order.
func (t Tensor) Float32s() ([]float32, error) { return readAll(t, Float32, raw.Tlb_read_f32) }

// Float64s copies the elements out in logical order.
func (t Tensor) Float64s() ([]float64, error) { return readAll(t, Float64, raw.Tlb_read_f64) }

// Int32s copies the elements out in logical order.
func (t Tensor) Int32s() ([]int32, error) { return readAll(t, Int32, raw.Tlb_read_i32) }

// ReadFloat32 copies the elements into dst, which must hold them all.
func (t Tensor) ReadFloat32(dst []float32) error {
	if err := t.ctx.live(); err != nil {
		return err
	}
	return call(func() int { return raw.Tlb_read_f32(t.ctx.c, t.bits, dst) })
}

// Free frees an ambient tensor; for a scoped one it only checks the handle.
func (t Tensor) Free() error {
	if err := t.ctx.live(); err != nil {
		return err
	}
	return call(func() int { return raw.Tlb_free(t.ctx.c, t.bits) })
}

// Retain copies t into target (an open scope), or into ambient memory when target is nil:
// the one way out of a scope.
func (t Tensor) Retain(target *Scope) (Tensor, error) {
	var s raw.Tl_scope = raw.SwigcptrTl_scope(0)
	if target != nil {
		if err := target.live(); err != nil {
			return Tensor{}, err
		}
		s = target.s
	}
	return t.ctx.made(func(out []uint64) int { return raw.Tlb_retain(t.ctx.c, t.bits, s, out) })
}

// MatMul is [m,k]x[k,n] (or batched) through OpenBLAS.
func (ctx *Context) MatMul(a, b Tensor) (Tensor, error) {
	return ctx.made(func(out []uint64) int { return raw.Tlb_matmul(ctx.c, a.bits, b.bits, out) })
}

// Add is elementwise with NumPy broadcasting; Sub, Mul and Div likewise.
func (ctx *Context) Add(a, b Tensor) (Tensor, error) {
	return ctx.made(func(out []uint64) int { return raw.Tlb_add(ctx.c, a.bits, b.bits, out) })
}

func (ctx *Context) Sub(a, b Tensor) (Tensor, error) {
	return ctx.made(func(out []uint64) int { return raw.Tlb_sub(ctx.c, a.bits, b.bits, out) })
}

func (ctx *Context) Mul(a, b Tensor) (Tensor, error) {
	return ctx.made(func(out []uint64) int { return raw.Tlb_mul(ctx.c, a.bits, b.bits, out) })
}

func (ctx *Context) Div(a, b Tensor) (Tensor, error) {
	return ctx.made(func(out []uint64) int { return raw.Tlb_div(ctx.c, a.bits, b.bits, out) })
}

// Softmax along axis (negative counts from the end), numerically stable.
func (ctx *Context) Softmax(a Tensor, axis int) (Tensor, error) {
	return ctx.made(func(out []uint64) int { return raw.Tlb_softmax(ctx.c, a.bits, axis, out) })
}

// Scale multiplies every element by s.
func (ctx *Context) Scale(a Tensor, s float64) (Tensor, error) {
	return ctx.made(func(out []uint64) int { return raw.Tlb_scale(ctx.c, a.bits, s, out) })
}
