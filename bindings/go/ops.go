package tl

import "github.com/tensorlife/tensorlife/bindings/go/internal/raw"

func (ctx *Context) binary(f func(uint64, uint64, uint64) uint64, a, b Tensor) (Tensor, error) {
	if err := ctx.own(a, b); err != nil {
		return Tensor{}, err
	}
	return ctx.made(f(ctx.c, a.bits, b.bits))
}

// elementwise is binary for Add, Sub, Mul and Div: a small op takes the direct crossing (a few
// ns, where cgo's costs tens: bench/README.md), anything else the ordinary call.
func (ctx *Context) elementwise(op int32, f func(uint64, uint64, uint64) uint64, a, b Tensor) (Tensor, error) {
	if err := ctx.own(a, b); err != nil {
		return Tensor{}, err
	}
	if bits, done := raw.Direct(op, ctx.c, a.bits, b.bits); done {
		return ctx.made(bits)
	}
	return ctx.made(f(ctx.c, a.bits, b.bits))
}

func (ctx *Context) unary(f func(uint64, uint64) uint64, a Tensor) (Tensor, error) {
	if err := ctx.own(a); err != nil {
		return Tensor{}, err
	}
	return ctx.made(f(ctx.c, a.bits))
}

// MatMul is [m,k]x[k,n] (or batched) through OpenBLAS.
func (ctx *Context) MatMul(a, b Tensor) (Tensor, error) { return ctx.binary(raw.Tlb_matmul, a, b) }

// Add is elementwise with NumPy broadcasting; Sub, Mul and Div likewise.
func (ctx *Context) Add(a, b Tensor) (Tensor, error) {
	return ctx.elementwise(raw.DirectAdd, raw.Tlb_add, a, b)
}
func (ctx *Context) Sub(a, b Tensor) (Tensor, error) {
	return ctx.elementwise(raw.DirectSub, raw.Tlb_sub, a, b)
}
func (ctx *Context) Mul(a, b Tensor) (Tensor, error) {
	return ctx.elementwise(raw.DirectMul, raw.Tlb_mul, a, b)
}
func (ctx *Context) Div(a, b Tensor) (Tensor, error) {
	return ctx.elementwise(raw.DirectDiv, raw.Tlb_div, a, b)
}

// GatherRows picks rows of table by Int32 ids: an embedding lookup.
func (ctx *Context) GatherRows(table, ids Tensor) (Tensor, error) {
	return ctx.binary(raw.Tlb_gather_rows, table, ids)
}

// Relu, Gelu (tanh form), Silu, Exp and Tanh are elementwise float ops.
func (ctx *Context) Relu(a Tensor) (Tensor, error) { return ctx.unary(raw.Tlb_relu, a) }
func (ctx *Context) Gelu(a Tensor) (Tensor, error) { return ctx.unary(raw.Tlb_gelu, a) }
func (ctx *Context) Silu(a Tensor) (Tensor, error) { return ctx.unary(raw.Tlb_silu, a) }
func (ctx *Context) Exp(a Tensor) (Tensor, error)  { return ctx.unary(raw.Tlb_exp, a) }
func (ctx *Context) Tanh(a Tensor) (Tensor, error) { return ctx.unary(raw.Tlb_tanh, a) }

// Convert makes a new tensor of dtype to: Float32 to and from Float16, BFloat16, Q8_0 and Q4_0
// (weights as models store them; see tl_ops.h for the ops that take them).
func (ctx *Context) Convert(a Tensor, to DType) (Tensor, error) {
	if err := ctx.own(a); err != nil {
		return Tensor{}, err
	}
	return ctx.made(raw.Tlb_convert(ctx.c, a.bits, int(to)))
}

// Contiguous copies a view into a new contiguous tensor.
func (ctx *Context) Contiguous(a Tensor) (Tensor, error) { return ctx.unary(raw.Tlb_contiguous, a) }

// RMSNorm over the last axis; w may be the zero Tensor for none.
func (ctx *Context) RMSNorm(x, w Tensor, eps float64) (Tensor, error) {
	if err := ctx.own(x, w); err != nil {
		return Tensor{}, err
	}
	return ctx.made(raw.Tlb_rmsnorm(ctx.c, x.bits, w.bits, eps))
}

// LayerNorm over the last axis; w and b may be zero Tensors for none.
func (ctx *Context) LayerNorm(x, w, b Tensor, eps float64) (Tensor, error) {
	if err := ctx.own(x, w, b); err != nil {
		return Tensor{}, err
	}
	return ctx.made(raw.Tlb_layernorm(ctx.c, x.bits, w.bits, b.bits, eps))
}

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Sum and Mean reduce one axis; ArgMax gives Int32 indices with the axis removed.
func (ctx *Context) Sum(a Tensor, axis int, keepdim bool) (Tensor, error) {
	return ctx.unary(func(c, a uint64) uint64 { return raw.Tlb_sum(c, a, axis, flag(keepdim)) }, a)
}
func (ctx *Context) Mean(a Tensor, axis int, keepdim bool) (Tensor, error) {
	return ctx.unary(func(c, a uint64) uint64 { return raw.Tlb_mean(c, a, axis, flag(keepdim)) }, a)
}
func (ctx *Context) ArgMax(a Tensor, axis int) (Tensor, error) {
	return ctx.unary(func(c, a uint64) uint64 { return raw.Tlb_argmax(c, a, axis) }, a)
}

// Softmax along axis (negative counts from the end), numerically stable.
func (ctx *Context) Softmax(a Tensor, axis int) (Tensor, error) {
	return ctx.unary(func(c, a uint64) uint64 { return raw.Tlb_softmax(c, a, axis) }, a)
}

// Scale multiplies every element by s.
func (ctx *Context) Scale(a Tensor, s float64) (Tensor, error) {
	return ctx.unary(func(c, a uint64) uint64 { return raw.Tlb_scale(c, a, s) }, a)
}

// Attention is softmax(scale * q k^T) v over the first validRows rows of a KV cache, causal by
// construction: q [H,Tq,hd], k and v [H,T,hd]; the result is [H,Tq,hd] at every position.
func (ctx *Context) Attention(q, k, v Tensor, validRows int64, scale float64) (Tensor, error) {
	if err := ctx.own(q, k, v); err != nil {
		return Tensor{}, err
	}
	return ctx.made(raw.Tlb_attention(ctx.c, q.bits, k.bits, v.bits, validRows, scale))
}

// Rope is the rotary position embedding of x [..., T, d], row t at position+t, pairs as mode
// says (RopeHalves: Hugging Face; RopeInterleaved: GGUF's Llama files).
func (ctx *Context) Rope(x Tensor, position int64, theta float64, mode RopeMode) (Tensor, error) {
	return ctx.unary(func(c, a uint64) uint64 { return raw.Tlb_rope(c, a, position, theta, int(mode)) }, x)
}

// Slice is a view of length elements from start along axis; it dies with its base.
func (ctx *Context) Slice(a Tensor, axis int, start, length int64) (Tensor, error) {
	return ctx.unary(func(c, a uint64) uint64 { return raw.Tlb_slice(c, a, axis, start, length) }, a)
}

// Transpose swaps two axes (a view).
func (ctx *Context) Transpose(a Tensor, d0, d1 int) (Tensor, error) {
	return ctx.unary(func(c, a uint64) uint64 { return raw.Tlb_transpose(c, a, d0, d1) }, a)
}

// Reshape is a view where the strides allow it, else a copy; one dim may be -1.
func (ctx *Context) Reshape(a Tensor, shape ...int64) (Tensor, error) {
	return ctx.unary(func(c, a uint64) uint64 { return raw.Tlb_reshape(c, a, shape) }, a)
}

// Concat joins tensors along axis.
func (ctx *Context) Concat(axis int, ts ...Tensor) (Tensor, error) {
	if err := ctx.own(ts...); err != nil {
		return Tensor{}, err
	}
	bits := make([]uint64, len(ts))
	for i, t := range ts {
		bits[i] = t.bits
	}
	return ctx.made(raw.Tlb_concat(ctx.c, bits, axis))
}

// CopyInto writes src into dst (a tensor or view, e.g. a KV-cache row), broadcasting src.
func (ctx *Context) CopyInto(src, dst Tensor) error {
	if err := ctx.own(src, dst); err != nil {
		return err
	}
	return ctx.status(raw.Tlb_copy_into(ctx.c, src.bits, dst.bits))
}
