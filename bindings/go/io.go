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

// GGUFFile is an open GGUF file (versions 2 and 3, as llama.cpp writes them), mapped read-only:
// Get gives a read-only tensor over the mapping in its stored dtype (Q8_0, Q4_0, Float16, ...);
// the metadata keys are read by type.
type GGUFFile struct {
	ctx *Context
	f   uint64
}

// OpenGGUF opens and checks a file (a malformed one gives ErrParse naming the problem).
func (ctx *Context) OpenGGUF(path string) (*GGUFFile, error) {
	if err := checkName("path", path); err != nil {
		return nil, err
	}
	f := raw.Tlb_gguf_open(ctx.c, path)
	if f == 0 {
		return nil, ctx.fail()
	}
	g := &GGUFFile{ctx, f}
	runtime.SetFinalizer(g, (*GGUFFile).Close)
	return g, nil
}

// open is the file's handle, or ErrInvalidHandle once closed.
func (g *GGUFFile) open() (uint64, error) {
	if g.f == 0 {
		return 0, refuse(ErrInvalidHandle, "the GGUF file is closed")
	}
	return g.f, nil
}

// Names are the tensors' names in file order.
func (g *GGUFFile) Names() []string {
	names := make([]string, raw.Tlb_gguf_tensor_count(g.f))
	for i := range names {
		names[i] = raw.Tlb_gguf_tensor_name(g.f, int64(i))
	}
	runtime.KeepAlive(g)
	return names
}

// Keys are the metadata keys in file order.
func (g *GGUFFile) Keys() []string {
	keys := make([]string, raw.Tlb_gguf_key_count(g.f))
	for i := range keys {
		keys[i] = raw.Tlb_gguf_key_name(g.f, int64(i))
	}
	runtime.KeepAlive(g)
	return keys
}

// Get gives one tensor over the mapping (ErrNotFound for a name the file does not hold).
func (g *GGUFFile) Get(name string) (Tensor, error) {
	f, err := g.open()
	if err == nil {
		err = checkName("tensor name", name)
	}
	if err != nil {
		return Tensor{}, err
	}
	t, err := g.ctx.made(raw.Tlb_gguf_get(g.ctx.c, f, name))
	runtime.KeepAlive(g)
	return t, err
}

// KeyType gives a key's type, and for an array its items' type and length (1 for a scalar).
func (g *GGUFFile) KeyType(key string) (typ, item GGUFType, count int64, err error) {
	f, err := g.open()
	if err == nil {
		err = checkName("key", key)
	}
	if err != nil {
		return 0, 0, 0, err
	}
	v := make([]int64, 3)
	err = g.ctx.status(raw.Tlb_gguf_key_type(g.ctx.c, f, key, v))
	runtime.KeepAlive(g)
	return GGUFType(v[0]), GGUFType(v[1]), v[2], err
}

// Int reads an integer or bool key; item >= 0 reads that item of an array of numbers.
func (g *GGUFFile) Int(key string, item int64) (int64, error) {
	f, err := g.open()
	if err == nil {
		err = checkName("key", key)
	}
	if err != nil {
		return 0, err
	}
	v := make([]int64, 1)
	err = g.ctx.status(raw.Tlb_gguf_int(g.ctx.c, f, key, item, v))
	runtime.KeepAlive(g)
	return v[0], err
}

// Float reads any number key as float64; item >= 0 reads that item of an array of numbers.
func (g *GGUFFile) Float(key string, item int64) (float64, error) {
	f, err := g.open()
	if err == nil {
		err = checkName("key", key)
	}
	if err != nil {
		return 0, err
	}
	v := make([]float64, 1)
	err = g.ctx.status(raw.Tlb_gguf_float(g.ctx.c, f, key, item, v))
	runtime.KeepAlive(g)
	return v[0], err
}

// String reads a string key; item >= 0 reads that item of an array of strings.
func (g *GGUFFile) String(key string, item int64) (string, error) {
	f, err := g.open()
	if err == nil {
		err = checkName("key", key)
	}
	if err != nil {
		return "", err
	}
	s := raw.Tlb_gguf_string(g.ctx.c, f, key, item)
	runtime.KeepAlive(g)
	if s == "" && raw.Tlb_status(g.ctx.c) != 0 { // the call cleared the record: "" with 0 is an empty string
		return "", g.ctx.fail()
	}
	return s, nil
}

// Close frees the file's index (its tensors keep the mapping); a second Close does nothing.
func (g *GGUFFile) Close() error {
	raw.Tlb_gguf_close(g.f)
	g.f = 0
	return nil
}
