// Package tl is the Go API of tensorlife: eager tensor math with scoped memory lifetimes.
//
//	ctx, _ := tl.NewContext()
//	defer ctx.Close()
//	step, _ := ctx.OpenScope("decode-step", 1<<16)
//	defer step.Close()
//	y, err := ctx.MatMul(x, w) // placed in the innermost open scope
//	step.Reset()               // y dies here; using it returns tl.ErrStorageClosed
//
// Every failure is an *Error carrying the library's status and message, so
// errors.Is(err, tl.ErrStorageClosed) works and err.Error() names the storage.
package tl

import (
	"fmt"
	"runtime"

	"tensorlife/bindings/go/internal/raw"
)

// Error is a failed call: the status code and tl_last_error()'s message.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return raw.Tlb_status_string(e.Status)
	}
	return raw.Tlb_status_string(e.Status) + ": " + e.Message
}

// Is matches the sentinel errors below by status.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Status == e.Status
}

// Sentinels for errors.Is.
var (
	ErrInvalidArgument = &Error{Status: raw.E_INVALID_ARGUMENT}
	ErrInvalidHandle   = &Error{Status: raw.E_INVALID_HANDLE}
	ErrStorageClosed   = &Error{Status: raw.E_STORAGE_CLOSED}
	ErrShape           = &Error{Status: raw.E_SHAPE}
	ErrDtype           = &Error{Status: raw.E_DTYPE}
	ErrScopeFull       = &Error{Status: raw.E_SCOPE_FULL}
	ErrOutOfMemory     = &Error{Status: raw.E_OUT_OF_MEMORY}
	ErrScopeOrder      = &Error{Status: raw.E_SCOPE_ORDER}
	ErrIO              = &Error{Status: raw.E_IO}
	ErrParse           = &Error{Status: raw.E_PARSE}
	ErrInternal        = &Error{Status: raw.E_INTERNAL}
	// ErrClosed: the Context or Scope was closed on the Go side already.
	ErrClosed = &Error{Status: raw.E_INVALID_HANDLE, Message: "closed already"}
)

// call runs one C call and reads this thread's message before another goroutine can run a C
// call on the same OS thread: the message is thread-local in the library.
func call(f func() int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if st := f(); st != raw.OK {
		return &Error{Status: st, Message: raw.Tlb_last_error()}
	}
	return nil
}

// Version is the library's version string.
func Version() string { return raw.Tlb_version() }

// Context owns every scope and tensor made through it.  Use it from one goroutine at a time.
type Context struct {
	c raw.Tl_context
}

// NewContext makes a context with the default allocator.
func NewContext() (*Context, error) {
	var c raw.Tl_context
	err := call(func() int {
		c = raw.Tlb_context_new()
		return raw.Tlb_last_status()
	})
	if err != nil {
		return nil, err
	}
	return &Context{c: c}, nil
}

// Close frees every scope and tensor of the context.  A second Close does nothing.
func (ctx *Context) Close() {
	if ctx.c != nil {
		raw.Tlb_context_free(ctx.c)
		ctx.c = nil
	}
}

func (ctx *Context) live() error {
	if ctx == nil || ctx.c == nil {
		return fmt.Errorf("context: %w", ErrClosed)
	}
	return nil
}

// Scope is a slab whose tensors all die at Reset.  Scopes nest; the innermost open one
// receives every new tensor.  Use `defer scope.Close()`.
type Scope struct {
	ctx *Context
	s   raw.Tl_scope
}

// OpenScope pushes a scope with an initial slab of slabBytes (it grows as needed).
func (ctx *Context) OpenScope(name string, slabBytes int64) (*Scope, error) {
	if err := ctx.live(); err != nil {
		return nil, err
	}
	var s raw.Tl_scope
	err := call(func() int {
		s = raw.Tlb_scope_open(ctx.c, name, slabBytes)
		return raw.Tlb_last_status()
	})
	if err != nil {
		return nil, err
	}
	return &Scope{ctx: ctx, s: s}, nil
}

func (s *Scope) live() error {
	if s == nil || s.s == nil || s.ctx.c == nil {
		return fmt.Errorf("scope: %w", ErrClosed)
	}
	return nil
}

// Reset kills every tensor placed in the scope; the slab is kept for the next step.
func (s *Scope) Reset() error {
	if err := s.live(); err != nil {
		return err
	}
	return call(func() int { return raw.Tlb_scope_reset(s.s) })
}

// Close resets the scope, frees its slab and pops it.  A second Close returns ErrClosed.
func (s *Scope) Close() error {
	if err := s.live(); err != nil {
		return err
	}
	err := call(func() int { return raw.Tlb_scope_close(s.s) })
	if err == nil {
		s.s = nil
	}
	return err
}

// ScopeStats are the scope's memory figures.
type ScopeStats struct {
	Generation, SlabBytes, UsedBytes, PeakBytes, OverflowBytes, GrowEvents, LiveTensors uint64
}

// Stats reads the scope's figures now.
func (s *Scope) Stats() (ScopeStats, error) {
	if err := s.live(); err != nil {
		return ScopeStats{}, err
	}
	v := make([]uint64, 7)
	if err := call(func() int { return raw.Tlb_scope_stats(s.s, v) }); err != nil {
		return ScopeStats{}, err
	}
	return ScopeStats{v[0], v[1], v[2], v[3], v[4], v[5], v[6]}, nil
}
