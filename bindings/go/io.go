package tl

import (
	"runtime"
	"sort"
	"strings"

	"github.com/tensorlife/tensorlife/bindings/go/internal/raw"
)

// SafetensorsFile is an open safetensors file: its header is checked at open, a tensor's
// data is read at Get.
type SafetensorsFile struct {
	ctx *Context
	f   uint64
}

// OpenSafetensors opens and checks a file (malformed files give ErrParse naming the problem).
func (ctx *Context) OpenSafetensors(path string) (*SafetensorsFile, error) {
	return ctx.openFile(path, raw.Tlb_st_open)
}

// openFile opens path with open (read or mapped), the file closed by the collector if dropped.
func (ctx *Context) openFile(path string, open func(uint64, string) uint64) (*SafetensorsFile, error) {
	if err := checkName("path", path); err != nil {
		return nil, err
	}
	f := open(ctx.c, path)
	if f == 0 {
		return nil, ctx.fail()
	}
	sf := &SafetensorsFile{ctx, f}
	runtime.SetFinalizer(sf, (*SafetensorsFile).Close)
	return sf, nil
}

// MapSafetensors opens a file with its data mapped read-only: Get gives its aligned Float32,
// Float64 and Int32 tensors over the mapping with no copy (Maps says which); they are
// read-only (CopyInto into one is ErrInvalidArgument).  The mapping lives until Close and the
// last tensor over it dies.
func (ctx *Context) MapSafetensors(path string) (*SafetensorsFile, error) {
	return ctx.openFile(path, raw.Tlb_st_map)
}

// Maps reports whether Get of name gives a tensor over the mapping (else a copy).
func (sf *SafetensorsFile) Maps(name string) bool {
	m := strings.IndexByte(name, 0) < 0 && raw.Tlb_st_maps(sf.f, name) == 1
	runtime.KeepAlive(sf)
	return m
}

// Names are the file's tensor names in file order.
func (sf *SafetensorsFile) Names() []string {
	n := raw.Tlb_st_count(sf.f)
	names := make([]string, n)
	for i := range names {
		names[i] = raw.Tlb_st_name(sf.f, int64(i))
	}
	runtime.KeepAlive(sf)
	return names
}

// Get reads one tensor into the current target (F16/BF16 arrive as Float32).
func (sf *SafetensorsFile) Get(name string) (Tensor, error) {
	if err := checkName("tensor name", name); err != nil {
		return Tensor{}, err
	}
	t, err := sf.ctx.made(raw.Tlb_st_get(sf.ctx.c, sf.f, name))
	runtime.KeepAlive(sf)
	return t, err
}

// Close frees the file's index; a second Close does nothing.
func (sf *SafetensorsFile) Close() error {
	raw.Tlb_st_close(sf.f)
	sf.f = 0
	return nil
}

// LoadSafetensors reads every tensor of a file into the current target.
func (ctx *Context) LoadSafetensors(path string) (map[string]Tensor, error) {
	sf, err := ctx.OpenSafetensors(path)
	if err != nil {
		return nil, err
	}
	defer sf.Close()
	out := make(map[string]Tensor)
	for _, name := range sf.Names() {
		t, err := sf.Get(name)
		if err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
}

// SaveSafetensors writes the tensors under their names, atomically.
func (ctx *Context) SaveSafetensors(path string, tensors map[string]Tensor) error {
	if err := checkName("path", path); err != nil {
		return err
	}
	names := make([]string, 0, len(tensors))
	for n, t := range tensors {
		if strings.ContainsAny(n, "\n\x00") {
			return refuse(ErrInvalidArgument, "a tensor name contains a newline or a NUL byte")
		}
		if err := ctx.own(t); err != nil {
			return err
		}
		names = append(names, n)
	}
	sort.Strings(names)
	handles := make([]uint64, len(names))
	for i, n := range names {
		handles[i] = tensors[n].bits
	}
	return ctx.status(raw.Tlb_safetensors_save(ctx.c, path, strings.Join(names, "\n"), handles))
}

// ReportJSON describes every open scope and the ambient totals, as JSON.
func (ctx *Context) ReportJSON() (string, error) {
	if s := raw.Tlb_context_report_json(ctx.c); s != "" {
		return s, nil
	}
	return "", ctx.fail()
}

// JSON is {"dtype","shape","data"}, floats exact, non-finite values as "nan", "inf", "-inf".
func (t Tensor) JSON() (string, error) {
	if err := t.live(); err != nil {
		return "", err
	}
	if s := raw.Tlb_tensor_to_json(t.ctx.c, t.bits); s != "" {
		return s, nil
	}
	return "", t.ctx.fail()
}

// TensorFromJSON is the reverse of Tensor.JSON, into the current target.
func (ctx *Context) TensorFromJSON(s string) (Tensor, error) {
	if err := checkName("JSON text", s); err != nil {
		return Tensor{}, err
	}
	return ctx.made(raw.Tlb_tensor_from_json(ctx.c, s))
}
