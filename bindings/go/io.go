package tl

import (
	"sort"
	"strings"

	"tensorlife/bindings/go/internal/raw"
)

// LoadSafetensors reads every tensor of a safetensors file into the current target
// (F16/BF16 arrive as Float32).  Malformed files give ErrParse naming the problem.
func (ctx *Context) LoadSafetensors(path string) (map[string]Tensor, error) {
	if err := ctx.live(); err != nil {
		return nil, err
	}
	var f raw.Tl_st_file
	if err := call(func() int { f = raw.Tlb_st_open(ctx.c, path); return raw.Tlb_last_status() }); err != nil {
		return nil, err
	}
	defer raw.Tlb_st_close(f)
	out := make(map[string]Tensor)
	for i := int64(0); i < raw.Tlb_st_count(f); i++ {
		name := raw.Tlb_st_name(f, i)
		t, err := ctx.made(func(o []uint64) int { return raw.Tlb_st_get(ctx.c, f, name, o) })
		if err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
}

// SaveSafetensors writes the tensors under their names (names may not contain a newline).
func (ctx *Context) SaveSafetensors(path string, tensors map[string]Tensor) error {
	if err := ctx.live(); err != nil {
		return err
	}
	names := make([]string, 0, len(tensors))
	for n := range tensors {
		if strings.Contains(n, "\n") {
			return &Error{Status: raw.E_INVALID_ARGUMENT, Message: "a tensor name contains a newline"}
		}
		names = append(names, n)
	}
	sort.Strings(names)
	handles := make([]uint64, len(names))
	for i, n := range names {
		handles[i] = tensors[n].bits
	}
	return call(func() int { return raw.Tlb_safetensors_save(ctx.c, path, strings.Join(names, "\n"), handles) })
}

// ReportJSON describes every open scope and the ambient totals, as JSON.
func (ctx *Context) ReportJSON() (string, error) {
	if err := ctx.live(); err != nil {
		return "", err
	}
	var s string
	err := call(func() int { s = raw.Tlb_context_report_json(ctx.c); return raw.Tlb_last_status() })
	return s, err
}

// JSON is {"dtype","shape","data"}, floats exact, non-finite values as "nan", "inf", "-inf".
func (t Tensor) JSON() (string, error) {
	if err := t.ctx.live(); err != nil {
		return "", err
	}
	var s string
	err := call(func() int { s = raw.Tlb_tensor_to_json(t.ctx.c, t.bits); return raw.Tlb_last_status() })
	return s, err
}

// TensorFromJSON is the reverse of Tensor.JSON, into the current target.
func (ctx *Context) TensorFromJSON(s string) (Tensor, error) {
	return ctx.made(func(o []uint64) int { return raw.Tlb_tensor_from_json(ctx.c, s, o) })
}
