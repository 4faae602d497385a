package tl

import "tensorlife/bindings/go/internal/raw"

// For the benchmarks' C baseline only.
func RawContext(c *Context) raw.Tl_context { return c.c }
func RawScope(s *Scope) raw.Tl_scope       { return s.s }
func Bits(t Tensor) uint64                 { return t.bits }
