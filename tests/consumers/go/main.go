// A consumer of the installed tensorlife and its Go module: the shared 50-step scenario
// (ambient weights, a scope reset per step, values checked, no growth after step 1) and a
// tensor kept past its reset failing with the storage named.
package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"

	tl "github.com/tensorlife/tensorlife/bindings/go"
)

const d = 8

func run() error {
	ctx, err := tl.NewContext()
	if err != nil {
		return err
	}
	defer ctx.Close()
	wdata := make([]float32, d*d)
	for i := range wdata {
		wdata[i] = float32(i%7)/7 - 0.4
	}
	w, err := ctx.FromFloat32([]int64{d, d}, wdata)
	if err != nil {
		return err
	}
	step, err := ctx.OpenScope("decode-step", 1<<16)
	if err != nil {
		return err
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
			return err
		}
		h, err := ctx.MatMul(x, w)
		if err != nil {
			return err
		}
		p, err := ctx.Softmax(h, -1)
		if err != nil {
			return err
		}
		got, err := p.Float32s()
		if err != nil {
			return err
		}
		logits, top, total := make([]float64, d), math.Inf(-1), 0.0
		for j := range logits {
			for k := 0; k < d; k++ {
				logits[j] += float64(xdata[k]) * float64(wdata[k*d+j])
			}
			top = math.Max(top, logits[j])
		}
		for _, l := range logits {
			total += math.Exp(l - top)
		}
		for j, l := range logits {
			if want := math.Exp(l-top) / total; math.Abs(float64(got[j])-want) > 1e-5 {
				return fmt.Errorf("step %d col %d: %g, want %g", s, j, got[j], want)
			}
		}
		kept = p
		if err := step.Reset(); err != nil {
			return err
		}
		st, err := step.Stats()
		if err != nil {
			return err
		}
		if s == 0 {
			first = st
		} else if st.SlabBytes != first.SlabBytes || st.GrowEvents != first.GrowEvents {
			return fmt.Errorf("step %d grew: %+v after %+v", s, st, first)
		}
	}
	_, err = kept.Float32s()
	if !errors.Is(err, tl.ErrStorageClosed) || !strings.Contains(err.Error(), "storage 'decode-step'") {
		return fmt.Errorf("a tensor kept past its reset gave %v", err)
	}
	fmt.Printf("go consumer ok: tensorlife %s, 50 steps, stale tensor refused: %v\n", tl.Version(), err)
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "go consumer:", err)
		os.Exit(1)
	}
	if len(os.Args) == 3 {
		if err := runModel(os.Args[1], os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "go consumer:", err)
			os.Exit(1)
		}
	}
}
