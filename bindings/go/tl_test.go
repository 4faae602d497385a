package tl_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	tl "github.com/tensorlife/tensorlife/bindings/go"
	"github.com/tensorlife/tensorlife/bindings/go/internal/raw"
)

const d = 8

// The shared scenario: ambient weights, a 50-step decode-like loop (matmul, add, softmax) in a
// scope reset per step, checked against values computed here, no growth after step 1, and a
// tensor kept past its reset failing with the storage named.
func TestDecodeLoopScenario(t *testing.T) {
	ctx, err := tl.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	wdata, bdata := make([]float32, d*d), make([]float32, d)
	for i := range wdata {
		wdata[i] = float32(i%7)/7 - 0.4
	}
	for i := range bdata {
		bdata[i] = float32(i) / 10
	}
	w, err := ctx.FromFloat32([]int64{d, d}, wdata)
	if err != nil {
		t.Fatal(err)
	}
	bias, _ := ctx.FromFloat32([]int64{d}, bdata)
	step, err := ctx.OpenScope("decode-step", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer step.Close()

	var first tl.ScopeStats
	var kept tl.Tensor
	for s := 0; s < 50; s++ {
		xdata := make([]float32, d)
		for i := range xdata {
			xdata[i] = float32((s+i)%5) - 2
		}
		x, err := ctx.FromFloat32([]int64{1, d}, xdata)
		if err != nil {
			t.Fatal(err)
		}
		h, err := ctx.MatMul(x, w)
		if err != nil {
			t.Fatal(err)
		}
		h, err = ctx.Add(h, bias)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ctx.Softmax(h, -1)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Float32s()
		if err != nil {
			t.Fatal(err)
		}
		// The reference, computed here.
		logits := make([]float64, d)
		top := math.Inf(-1)
		for j := 0; j < d; j++ {
			for k := 0; k < d; k++ {
				logits[j] += float64(xdata[k]) * float64(wdata[k*d+j])
			}
			logits[j] += float64(bdata[j])
			top = math.Max(top, logits[j])
		}
		total := 0.0
		for j := range logits {
			total += math.Exp(logits[j] - top)
		}
		for j := range logits {
			want := math.Exp(logits[j]-top) / total
			if math.Abs(float64(got[j])-want) > 1e-5 {
				t.Fatalf("step %d col %d: %g, want %g", s, j, got[j], want)
			}
		}
		kept = p
		if err := step.Reset(); err != nil {
			t.Fatal(err)
		}
		st, err := step.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if s == 0 {
			first = st
		} else if st.SlabBytes != first.SlabBytes || st.PeakBytes != first.PeakBytes || st.GrowEvents != first.GrowEvents {
			t.Fatalf("step %d grew: %+v after %+v", s, st, first)
		}
	}
	_, err = kept.Float32s()
	if !errors.Is(err, tl.ErrStorageClosed) {
		t.Fatalf("a tensor kept past its reset gave %v", err)
	}
	if !strings.Contains(err.Error(), "storage 'decode-step'") || !strings.Contains(err.Error(), "gen 49 is closed (scope is at gen 50)") {
		t.Fatalf("message does not name the storage: %q", err)
	}
}

func TestRetainClosingAndWrongSizes(t *testing.T) {
	ctx, err := tl.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	scope, err := ctx.OpenScope("frame", 1024)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := ctx.FromFloat32([]int64{2}, []float32{1, 2})
	out, err := x.Retain(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := scope.Close(); err != nil {
		t.Fatal(err)
	}
	if err := scope.Close(); !errors.Is(err, tl.ErrInvalidHandle) {
		t.Fatalf("closing twice gave %v", err)
	}
	if err := scope.Reset(); !errors.Is(err, tl.ErrInvalidHandle) {
		t.Fatalf("reset after close gave %v", err)
	}
	if v, err := out.Float32s(); err != nil || v[1] != 2 {
		t.Fatalf("retained tensor: %v %v", v, err)
	}
	if _, err := x.Float32s(); !errors.Is(err, tl.ErrStorageClosed) {
		t.Fatalf("use after close gave %v", err)
	}
	if _, err := ctx.FromFloat32([]int64{2, 3}, []float32{1, 2}); !errors.Is(err, tl.ErrInvalidArgument) {
		t.Fatalf("wrong data size gave %v", err)
	}
	small := make([]float32, 1)
	if err := out.ReadFloat32(small); !errors.Is(err, tl.ErrInvalidArgument) {
		t.Fatalf("short read buffer gave %v", err)
	}
	if _, err := ctx.MatMul(out, out); !errors.Is(err, tl.ErrShape) {
		t.Fatalf("bad matmul gave %v", err)
	}
	ids, _ := ctx.FromInt32([]int64{2}, []int32{4, 5})
	if _, err := ctx.Add(ids, out); !errors.Is(err, tl.ErrDtype) {
		t.Fatalf("mixed dtypes gave %v", err)
	}
	ctx.Close()
	ctx.Close() // a no-op
	if _, err := ctx.FromFloat32([]int64{1}, []float32{1}); !errors.Is(err, tl.ErrInvalidHandle) {
		t.Fatalf("closed context gave %v", err)
	}
	if _, err := out.Float32s(); !errors.Is(err, tl.ErrInvalidHandle) {
		t.Fatalf("tensor of a closed context gave %v", err)
	}
}

// Benchmarks: one tiny add through Go against the same adds made from C in one call, and a
// trivial cgo call (BenchmarkTrivialCgo).
func benchmarkSetup(b *testing.B) (*tl.Context, *tl.Scope, tl.Tensor, tl.Tensor) {
	ctx, err := tl.NewContext()
	if err != nil {
		b.Fatal(err)
	}
	x, _ := ctx.FromFloat32([]int64{16}, make([]float32, 16))
	y, _ := ctx.FromFloat32([]int64{16}, make([]float32, 16))
	s, err := ctx.OpenScope("bench", 1<<16)
	if err != nil {
		b.Fatal(err)
	}
	return ctx, s, x, y
}

func BenchmarkAdd16Go(b *testing.B) {
	ctx, s, x, y := benchmarkSetup(b)
	defer ctx.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ctx.Add(x, y); err != nil {
			b.Fatal(err)
		}
		if i&255 == 255 {
			s.Reset()
		}
	}
}

func BenchmarkAdd16FromC(b *testing.B) {
	ctx, s, x, y := benchmarkSetup(b)
	defer ctx.Close()
	b.ResetTimer()
	c := tl.RawContext(ctx)
	if st := raw.Tlb_bench_add_loop(c, tl.RawScope(s), tl.Bits(x), tl.Bits(y), int64(b.N), 1); st != 0 {
		b.Fatal(raw.Tlb_message(c))
	}
}

// The crossing alone: a cgo call of a C function that does nothing (the ABI version), the part
// of each call no binding can remove (bench/README.md).
func BenchmarkTrivialCgo(b *testing.B) {
	sum := 0
	for i := 0; i < b.N; i++ {
		sum += tl.ABIVersion()
	}
	if sum != b.N*tl.ABIVersion() {
		b.Fatal("ABI version changed")
	}
}

func TestSafetensorsAndJSON(t *testing.T) {
	ctx, err := tl.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	a, _ := ctx.FromFloat32([]int64{2, 2}, []float32{1, 2, 3, float32(math.Inf(1))})
	ids, _ := ctx.FromInt32([]int64{3}, []int32{7, -8, 9})
	path := t.TempDir() + "/w.safetensors"
	if err := ctx.SaveSafetensors(path, map[string]tl.Tensor{"a": a, "ids": ids}); err != nil {
		t.Fatal(err)
	}
	loaded, err := ctx.LoadSafetensors(path)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := loaded["a"].Float32s(); len(v) != 4 || v[1] != 2 || !math.IsInf(float64(v[3]), 1) {
		t.Fatalf("a came back as %v", v)
	}
	if v, _ := loaded["ids"].Int32s(); len(v) != 3 || v[1] != -8 {
		t.Fatalf("ids came back as %v", v)
	}
	if _, err := ctx.LoadSafetensors(t.TempDir() + "/missing"); !errors.Is(err, tl.ErrIO) {
		t.Fatalf("missing file gave %v", err)
	}
	js, err := a.JSON()
	if err != nil || !strings.Contains(js, `"inf"`) {
		t.Fatalf("json %q %v", js, err)
	}
	back, err := ctx.TensorFromJSON(js)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := back.Float32s(); v[2] != 3 {
		t.Fatalf("json round trip gave %v", v)
	}
	if _, err := ctx.TensorFromJSON("{"); !errors.Is(err, tl.ErrParse) {
		t.Fatalf("bad json gave %v", err)
	}
	s, _ := ctx.OpenScope("report-me", 0)
	defer s.Close()
	report, err := ctx.ReportJSON()
	if err != nil || !strings.Contains(report, `"name":"report-me"`) {
		t.Fatalf("report %q %v", report, err)
	}
}

func TestViewsReductionsAndCaches(t *testing.T) {
	ctx, err := tl.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	a, _ := ctx.FromFloat32([]int64{2, 3}, []float32{1, 5, 3, -4, 2, 6})
	at, _ := ctx.Transpose(a, 0, 1)
	flat, _ := ctx.Reshape(at, 6)
	if v, _ := flat.Float32s(); v[1] != -4 || v[2] != 5 {
		t.Fatalf("transpose+reshape gave %v", v)
	}
	best, _ := ctx.ArgMax(a, -1)
	if v, _ := best.Int32s(); v[0] != 1 || v[1] != 2 {
		t.Fatalf("argmax gave %v", v)
	}
	sum, _ := ctx.Sum(a, 0, false)
	if v, _ := sum.Float32s(); v[0] != -3 || v[2] != 9 {
		t.Fatalf("sum gave %v", v)
	}
	cache, _ := ctx.FromFloat32([]int64{3, 3}, make([]float32, 9))
	row, _ := ctx.Slice(cache, 0, 2, 1)
	ids, _ := ctx.FromInt32([]int64{1}, []int32{1})
	picked, _ := ctx.GatherRows(a, ids)
	if err := ctx.CopyInto(picked, row); err != nil {
		t.Fatal(err)
	}
	if v, _ := cache.Float32s(); v[6] != -4 || v[8] != 6 || v[0] != 0 {
		t.Fatalf("cache gave %v", v)
	}
	both, _ := ctx.Concat(0, a, a)
	if info, _ := both.Info(); info.Shape[0] != 4 {
		t.Fatalf("concat shape %v", info.Shape)
	}
	n, err := ctx.RMSNorm(a, tl.Tensor{}, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := n.Float32s()
	ms := (1.0 + 25 + 9) / 3
	if math.Abs(float64(v[0])-1/math.Sqrt(ms+1e-6)) > 1e-5 {
		t.Fatalf("rmsnorm gave %v", v)
	}
	if _, err := ctx.Slice(a, 0, 1, 5); !errors.Is(err, tl.ErrShape) {
		t.Fatalf("bad slice gave %v", err)
	}
	g, _ := ctx.Gelu(a)
	if v, _ := g.Float32s(); v[3] > 0 || v[1] < 4.9 {
		t.Fatalf("gelu gave %v", v)
	}
}

// Weights in a storage dtype: converted, used as a matmul's weight as stored, refused by
// arithmetic with the library's message.
func TestStorageDtypes(t *testing.T) {
	ctx, err := tl.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	w := make([]float32, 4*256) // 256: the super blocks of q4_K, q5_K and q6_K
	x := make([]float32, 256)
	for i := range w {
		w[i] = float32(i%7) - 3
	}
	for i := range x {
		x[i] = 127.0 / 128 // 8-bit activation blocks hold it exactly (step 1/128): every product is its decoded weights'
	}
	wf, _ := ctx.FromFloat32([]int64{4, 256}, w)
	xf, _ := ctx.FromFloat32([]int64{1, 256}, x)
	for _, dt := range []tl.DType{tl.Float16, tl.BFloat16, tl.Q8_0, tl.Q4_0, tl.Q4_1, tl.Q5_0, tl.Q5_1, tl.Q4_K, tl.Q5_K, tl.Q6_K} {
		wq, err := ctx.Convert(wf, dt)
		if err != nil {
			t.Fatalf("convert to %d: %v", dt, err)
		}
		if info, _ := wq.Info(); info.DType != dt {
			t.Fatalf("dtype %d, want %d", info.DType, dt)
		}
		wt, _ := ctx.Transpose(wq, 0, 1)
		y, err := ctx.MatMul(xf, wt)
		if err != nil {
			t.Fatal(err)
		}
		back, _ := ctx.Convert(wq, tl.Float32)
		bt, _ := ctx.Transpose(back, 0, 1)
		want, _ := ctx.MatMul(xf, bt)
		got, _ := y.Float32s()
		ref, _ := want.Float32s()
		for j := range got {
			if d := got[j] - ref[j]; d > 1e-3 || d < -1e-3 {
				t.Fatalf("dtype %d output %d: %g, want %g", dt, j, got[j], ref[j])
			}
		}
		if _, err := ctx.Add(wq, wq); !errors.Is(err, tl.ErrDtype) {
			t.Fatalf("add of dtype %d: %v, want ErrDtype", dt, err)
		}
	}
}

// tests/golden/metadata.gguf (make_golden.py): every GGUF value type, arrays, hostile keys, and
// a q8_0 and an f32 tensor, read back through the Go API.
func TestGGUF(t *testing.T) {
	ctx, _ := tl.NewContext()
	defer ctx.Close()
	f, err := ctx.OpenGGUF("../../tests/golden/metadata.gguf")
	if err != nil {
		t.Fatal(err)
	}
	if names := f.Names(); len(names) != 2 || names[0] != "w.q8_0" || names[1] != "x.f32" {
		t.Fatalf("names %v", names)
	}
	if s, err := f.String("general.architecture", -1); err != nil || s != "tensorlife-fixture" {
		t.Fatalf("architecture %q %v", s, err)
	}
	ints := map[string]int64{"fixture.u8": 200, "fixture.i8": -5, "fixture.u16": 60000, "fixture.i16": -30000,
		"fixture.u32": 4000000000, "fixture.i32": -2000000000, "fixture.i64": -(1 << 62), "fixture.bool": 1}
	for key, want := range ints {
		if v, err := f.Int(key, -1); err != nil || v != want {
			t.Fatalf("%s: %d %v, want %d", key, v, err, want)
		}
	}
	if v, err := f.Float("fixture.f64", -1); err != nil || v != -2.25 {
		t.Fatalf("f64 %v %v", v, err)
	}
	if v, err := f.Float("fixture.scores", 1); err != nil || v != -1.5 {
		t.Fatalf("scores[1] %v %v", v, err)
	}
	if v, err := f.Int("fixture.ids", 1); err != nil || v != -8 {
		t.Fatalf("ids[1] %v %v", v, err)
	}
	if s, err := f.String("fixture.strings", 2); err != nil || s != "" {
		t.Fatalf("strings[2] %q %v", s, err)
	}
	if s, err := f.String("fixture.strings", 1); err != nil || s != "\u03b2eta" {
		t.Fatalf("strings[1] %q %v", s, err)
	}
	typ, item, count, err := f.KeyType("fixture.ids")
	if err != nil || typ != tl.GGUFArray || item != tl.GGUFInt32 || count != 3 {
		t.Fatalf("key type %v %v %v %v", typ, item, count, err)
	}
	for _, c := range []struct {
		err  error
		call func() error
	}{
		{tl.ErrInvalidArgument, func() error { _, err := f.Int("fixture.u64", -1); return err }},
		{tl.ErrShape, func() error { _, err := f.Int("fixture.ids", 3); return err }},
		{tl.ErrDtype, func() error { _, err := f.Int("fixture.f32", -1); return err }},
		{tl.ErrNotFound, func() error { _, err := f.Int("no.such.key", -1); return err }},
		{tl.ErrInvalidArgument, func() error { _, err := f.Int("fixture\x00u8", -1); return err }},
		{tl.ErrNotFound, func() error { _, err := f.Get("missing"); return err }},
	} {
		if err := c.call(); !errors.Is(err, c.err) {
			t.Fatalf("want %v, got %v", c.err, err)
		}
	}
	w, err := f.Get("w.q8_0")
	if err != nil {
		t.Fatal(err)
	}
	if info, _ := w.Info(); info.DType != tl.Q8_0 || info.Shape[0] != 2 || info.Shape[1] != 64 || !info.ReadOnly {
		t.Fatalf("w info %+v", info)
	}
	f.Close()
	if _, err := f.Int("fixture.u8", -1); !errors.Is(err, tl.ErrInvalidHandle) {
		t.Fatalf("closed file: %v", err)
	}
	if _, err := ctx.OpenGGUF("tl_test.go"); !errors.Is(err, tl.ErrParse) {
		t.Fatalf("not a GGUF file: %v", err)
	}
}

// RoPE in both conventions against the formula; grouped-query attention over an f16 cache.
func TestLlamaOps(t *testing.T) {
	ctx, _ := tl.NewContext()
	defer ctx.Close()
	x := []float32{1, 2, 3, 4}
	xt, _ := ctx.FromFloat32([]int64{1, 4}, x)
	for _, c := range []struct {
		mode  tl.RopeMode
		pairs [2][2]int
	}{{tl.RopeHalves, [2][2]int{{0, 2}, {1, 3}}}, {tl.RopeInterleaved, [2][2]int{{0, 1}, {2, 3}}}} {
		want := []float64{1, 2, 3, 4}
		for i, p := range c.pairs {
			angle := 3 * math.Pow(10000, -2*float64(i)/4)
			a, b := float64(x[p[0]]), float64(x[p[1]])
			want[p[0]], want[p[1]] = a*math.Cos(angle)-b*math.Sin(angle), a*math.Sin(angle)+b*math.Cos(angle)
		}
		r, err := ctx.Rope(xt, 3, 10000, c.mode)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := r.Float32s()
		for i := range got {
			if math.Abs(float64(got[i])-want[i]) > 1e-5 {
				t.Fatalf("mode %d: %v, want %v", c.mode, got, want)
			}
		}
	}
	if _, err := ctx.Rope(xt, 0, 10000, tl.RopeMode(7)); !errors.Is(err, tl.ErrInvalidArgument) {
		t.Fatalf("mode 7: %v", err)
	}
	k, _ := ctx.Zeros(tl.Float16, 2, 3, 2)
	v, _ := ctx.Zeros(tl.Float16, 2, 3, 2)
	k32, _ := ctx.FromFloat32([]int64{2, 3, 2}, []float32{.5, .5, .5, .5, .5, .5, .5, .5, .5, .5, .5, .5})
	v32, _ := ctx.FromFloat32([]int64{2, 3, 2}, []float32{1, 2, 1, 2, 1, 2, 5, 6, 5, 6, 5, 6})
	if err := ctx.CopyInto(k32, k); err != nil {
		t.Fatal(err)
	}
	if err := ctx.CopyInto(v32, v); err != nil {
		t.Fatal(err)
	}
	q, _ := ctx.FromFloat32([]int64{4, 1, 2}, []float32{1, 1, 1, 1, 1, 1, 1, 1})
	out, err := ctx.Attention(q, k, v, 3, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := out.Float32s()
	want := []float32{1, 2, 1, 2, 5, 6, 5, 6} // query heads 0, 1 read kv head 0; 2, 3 kv head 1
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("grouped-query attention: %v, want %v", got, want)
		}
	}
}
