// Package tl is the Go API of tensorlife: eager tensor math with scoped memory lifetimes.
//
//	ctx, _ := tl.NewContext()
//	defer ctx.Close()
//	step, _ := ctx.OpenScope("decode-step", 1<<16)
//	defer step.Close()
//	y, err := ctx.MatMul(x, w) // placed in the innermost open scope
//	step.Reset()               // y dies here; using it returns tl.ErrStorageClosed
//
// Every failure is an *Error carrying the library's status and message: errors.Is(err,
// tl.ErrStorageClosed) matches exactly that status, and err.Error() names the storage.
//
// A Context may be used from several goroutines: its calls are serialised (a mutex in the C
// layer), so misuse costs time, never memory.  A Context dropped without Close is released by
// the garbage collector (runtime.SetFinalizer), with every scope and tensor in it.
package tl

import (
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/tensorlife/tensorlife/bindings/go/internal/raw"
)

// Error is a failed call: the status code, its name and the library's message.
type Error struct {
	Status  int
	Name    string
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Name
	}
	return e.Name + ": " + e.Message
}

// Is matches the one sentinel of e's status (lists_gen.go), and nothing else.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && sentinels[e.Status] == t
}

// newError is the failure recorded on context record c (0: no context).
func newError(c uint64) *Error {
	st := raw.Tlb_status(c)
	return &Error{Status: st, Name: raw.Tlb_status_string(st), Message: raw.Tlb_message(c)}
}

// refuse is a failure found on the Go side, before any C call.
func refuse(sentinel *Error, message string) *Error {
	return &Error{Status: sentinel.Status, Name: sentinel.Name, Message: message}
}

// checkName refuses strings C would cut short at a NUL byte.
func checkName(what, s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return refuse(ErrInvalidArgument, what+" contains a NUL byte")
	}
	return nil
}

// Version is the library's version string; ABIVersion its ABI number.
func Version() string { return raw.Tlb_version() }
func ABIVersion() int { return raw.Tlb_abi_version() }

// SetBLASThreads sets OpenBLAS's thread count, which MatMul uses (process-wide).
func SetBLASThreads(n int) error {
	if raw.Tlb_set_blas_threads(n) != 0 {
		return newError(0)
	}
	return nil
}

// BLASThreads is OpenBLAS's thread count.
func BLASThreads() int { return raw.Tlb_blas_threads() }

// Context owns every scope and tensor made through it.
type Context struct {
	c      uint64
	closed uint32     // 1 once Close ran: it no longer counts as outstanding
	pinned []*CMemory // memory wrapped by tensors: kept alive as long as the context
}

// The collector sees none of a context's C memory, so dropped Contexts would pile up unseen:
// while more than 64 are neither closed nor collected, every 64th NewContext runs a
// collection, bounding what dropped contexts can hold.
var outstanding, madeSinceCollection int64

// NewContext makes a context with the default allocator.
func NewContext() (*Context, error) {
	if atomic.AddInt64(&outstanding, 1) > 64 && atomic.AddInt64(&madeSinceCollection, 1)%64 == 0 {
		runtime.GC()
	}
	c := raw.Tlb_context_new()
	if c == 0 {
		atomic.AddInt64(&outstanding, -1)
		return nil, newError(0)
	}
	ctx := &Context{c: c}
	runtime.SetFinalizer(ctx, (*Context).release)
	return ctx, nil
}

func (ctx *Context) release() {
	if atomic.SwapUint32(&ctx.closed, 1) == 0 {
		atomic.AddInt64(&outstanding, -1)
	}
	raw.Tlb_context_release(ctx.c)
}

// Close frees every scope and tensor of the context now.  Later calls fail with
// ErrInvalidHandle; a second Close does nothing.
func (ctx *Context) Close() {
	if atomic.SwapUint32(&ctx.closed, 1) == 0 {
		atomic.AddInt64(&outstanding, -1)
	}
	raw.Tlb_context_close(ctx.c)
	runtime.KeepAlive(ctx)
}

func (ctx *Context) fail() error { return newError(ctx.c) }

// status turns a C status into an error, read from this context's record.
func (ctx *Context) status(st int) error {
	if st == 0 {
		return nil
	}
	return ctx.fail()
}

// made wraps the bits a C call returned (0: it failed).
func (ctx *Context) made(bits uint64) (Tensor, error) {
	if bits == 0 {
		return Tensor{}, ctx.fail()
	}
	return Tensor{ctx, bits}, nil
}

// own refuses a tensor of another Context before the call (the library refuses it too, by the
// handle's process-unique generation; here the message names the Go Context).
func (ctx *Context) own(ts ...Tensor) error {
	for _, t := range ts {
		if t.bits != 0 && t.ctx != ctx {
			return refuse(ErrInvalidHandle, "the tensor belongs to another Context")
		}
	}
	return nil
}

// ScopeOptions: Growth Grow (default) adds chunks as needed, Fixed refuses a request past the
// slab with ErrScopeFull; SlabBytes is allocated at open; MaxBytes (0: none) caps the scope.
type ScopeOptions struct {
	Growth    Growth
	SlabBytes int64
	MaxBytes  int64
}

// Scope is a slab whose tensors all die at Reset.  Scopes nest; the innermost open one
// receives every new tensor.  Use `defer scope.Close()`.
type Scope struct {
	ctx   *Context
	token uint64
}

// OpenScope pushes a growing scope with an initial slab of slabBytes.
func (ctx *Context) OpenScope(name string, slabBytes int64) (*Scope, error) {
	return ctx.OpenScopeWith(name, ScopeOptions{SlabBytes: slabBytes})
}

// OpenScopeWith pushes a scope with every option of tl_scope_open_ex.
func (ctx *Context) OpenScopeWith(name string, o ScopeOptions) (*Scope, error) {
	if err := checkName("scope name", name); err != nil {
		return nil, err
	}
	token := raw.Tlb_scope_open(ctx.c, name, int(o.Growth), o.SlabBytes, o.MaxBytes)
	if token == 0 {
		return nil, ctx.fail()
	}
	// No finalizer: a dropped Scope stays open until its Context is closed or collected (a
	// finalizer here would hold the Context back one more collection).
	return &Scope{ctx, token}, nil
}

// CurrentScope is the innermost open scope, or nil when new tensors are ambient.  It is a
// second view of that scope: dropping it closes nothing.
func (ctx *Context) CurrentScope() (*Scope, error) {
	token := raw.Tlb_scope_current(ctx.c)
	switch {
	case token < 0:
		return nil, ctx.fail()
	case token == 0:
		return nil, nil
	}
	return &Scope{ctx, uint64(token)}, nil
}

// Reset kills every tensor placed in the scope; the slab is kept for the next step.
func (s *Scope) Reset() error { return s.ctx.status(raw.Tlb_scope_reset(s.ctx.c, s.token)) }

// Close resets the scope, frees its slab and pops it.  A second Close returns ErrInvalidHandle.
func (s *Scope) Close() error { return s.ctx.status(raw.Tlb_scope_close(s.ctx.c, s.token)) }

// Name is the name the scope was opened with.
func (s *Scope) Name() (string, error) {
	name := raw.Tlb_scope_name(s.ctx.c, s.token)
	if name == "" { // a closed scope, or one named ""
		if _, err := s.Stats(); err != nil {
			return "", err
		}
	}
	return name, nil
}

// Is reports whether s and o are the same open scope.
func (s *Scope) Is(o *Scope) bool {
	return s != nil && o != nil && s.ctx == o.ctx && s.token == o.token
}

// Stats reads the scope's figures now.
func (s *Scope) Stats() (ScopeStats, error) {
	v := make([]uint64, scopeStatsSlots)
	if err := s.ctx.status(raw.Tlb_scope_stats(s.ctx.c, s.token, v)); err != nil {
		return ScopeStats{}, err
	}
	return scopeStatsOf(v), nil
}

// StatsJSON is tl_scope_stats_json: the same figures and the name, as JSON.
func (s *Scope) StatsJSON() (string, error) {
	j := raw.Tlb_scope_stats_json(s.ctx.c, s.token)
	if j == "" {
		return "", s.ctx.fail()
	}
	return j, nil
}
