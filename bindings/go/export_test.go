package tl

// For the benchmarks' C baseline only.
func RawContext(c *Context) uint64 { return c.c }
func RawScope(s *Scope) uint64     { return s.token }
func Bits(t Tensor) uint64         { return t.bits }
