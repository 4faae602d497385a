package tl

import "tensorlife/bindings/go/internal/raw"

func (ctx *Context) unary(f func(raw.Tl_context, uint64, []uint64) int, a Tensor) (Tensor, error) {
	return ctx.made(func(out []uint64) int { return f(ctx.c, a.bits, out) })
}

// Relu, Gelu (tanh form), Silu, Exp and Tanh are elementwise float ops.
func (ctx *Context) Relu(a Tensor) (Tensor, error) { return ctx.unary(raw.Tlb_relu, a) }
func (ctx *Context) Gelu(a Tensor) (Tensor, error) { return ctx.unary(raw.Tlb_gelu, a) }
func (ctx *Context) Silu(a Tensor) (Tensor, error) { return ctx.unary(raw.Tlb_silu, a) }
func (ctx *Context) Exp(a Tensor) (Tensor, error)  { return ctx.unary(raw.Tlb_exp, a) }
func (ctx *Context) Tanh(a Tensor) (Tensor, error) { return ctx.unary(raw.Tlb_tanh, a) }

// Contiguous copies a view into a new contiguous tensor.
func (ctx *Context) Contiguous(a Tensor) (Tensor, error) { return ctx.unary(raw.Tlb_contiguous, a) }

// RMSNorm over the last axis; w may be the zero Tensor for none.
func (ctx *Context) RMSNorm(x, w Tensor, eps float64) (Tensor, error) {
	return ctx.made(func(out []uint64) int { return raw.Tlb_rmsnorm(ctx.c, x.bits, w.bits, eps, out) })
}

// LayerNorm over the last axis; w and b may be zero Tensors for none.
func (ctx *Context) LayerNorm(x, w, b Tensor, eps float64) (Tensor, error) {
	return ctx.made(func(out []uint64) int { return raw.Tlb_layernorm(ctx.c, x.bits, w.bits, b.bits, eps, out) })
}

// Sum and Mean reduce one axis; ArgMax gives Int32 indices with the axis removed.
func (ctx *Context) Sum(a Tensor, axis int, keepdim bool) (Tensor, error) {
	return ctx.made(func(out []uint64) int { return raw.Tlb_reduce(ctx.c, a.bits, 0, axis, flag(keepdim), out) })
}

func (ctx *Context) Mean(a Tensor, axis int, keepdim bool) (Tensor, error) {
	return ctx.made(func(out []uint64) int { return raw.Tlb_reduce(ctx.c, a.bits, 1, axis, flag(keepdim), out) })
}

func (ctx *Context) ArgMax(a Tensor, axis int) (Tensor, error) {
	return ctx.made(func(out []uint64) int { return raw.Tlb_reduce(ctx.c, a.bits, 2, axis, 0, out) })
}

// Slice, Transpose and Reshape are views where they can be (they die with their base).
func (ctx *Context) Slice(a Tensor, axis int, start, length int64) (Tensor, error) {
	return ctx.made(func(out []uint64) int { return raw.Tlb_slice(ctx.c, a.bits, axis, start, length, out) })
}

func (ctx *Context) Transpose(a Tensor, d0, d1 int) (Tensor, error) {
	return ctx.made(func(out []uint64) int { return raw.Tlb_transpose(ctx.c, a.bits, d0, d1, out) })
}

func (ctx *Context) Reshape(a Tensor, shape []int64) (Tensor, error) {
	return ctx.made(func(out []uint64) int { return raw.Tlb_reshape(ctx.c, a.bits, shape, out) })
}

// Concat joins tensors along axis.
func (ctx *Context) Concat(axis int, ts ...Tensor) (Tensor, error) {
	bits := make([]uint64, len(ts))
	for i, t := range ts {
		bits[i] = t.bits
	}
	return ctx.made(func(out []uint64) int { return raw.Tlb_concat(ctx.c, bits, axis, out) })
}

// GatherRows looks up rows of table by Int32 ids (an embedding lookup).
func (ctx *Context) GatherRows(table, ids Tensor) (Tensor, error) {
	return ctx.made(func(out []uint64) int { return raw.Tlb_gather_rows(ctx.c, table.bits, ids.bits, out) })
}

// CopyInto writes src into dst (a tensor or a view, e.g. a KV-cache row), broadcasting src.
func (ctx *Context) CopyInto(src, dst Tensor) error {
	if err := ctx.live(); err != nil {
		return err
	}
	return call(func() int { return raw.Tlb_copy_into(ctx.c, src.bits, dst.bits) })
}

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}
