package tl_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	tl "github.com/tensorlife/tensorlife/bindings/go"
)

// The C tests' tiny model, which test.sh writes (tests/packaging/write_tiny_llama) and names in
// TL_TINY_MODEL.
func tinyModel(t *testing.T) *tl.Model {
	path := os.Getenv("TL_TINY_MODEL")
	if path == "" {
		t.Fatal("TL_TINY_MODEL names no model: run bindings/go/test.sh")
	}
	m, err := tl.OpenModel(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestModelsAndSessions(t *testing.T) {
	m := tinyModel(t)
	defer m.Close()
	if m.VocabSize != 271 || m.Layers != 2 || m.KvHeads != 2 || !m.HasVocabulary {
		t.Fatalf("model info %+v", m)
	}
	ids, err := m.Tokenize("abc ab", true, false)
	if err != nil || len(ids) != 3 || ids[0] != m.Bos {
		t.Fatalf("tokenize: %v %v", ids, err)
	}
	s, err := m.NewSession(tl.SessionOptions{ContextLength: 64})
	if err != nil {
		t.Fatal(err)
	}
	var first, again []string
	collect := func(into *[]string) func(string) bool {
		return func(piece string) bool { *into = append(*into, piece); return true }
	}
	if err := s.Generate("abc ab", 10, tl.Greedy(), collect(&first)); err != nil {
		t.Fatal(err)
	}
	if err := s.Rewind(3); err != nil {
		t.Fatal(err)
	}
	if err := s.Generate("", 10, tl.Greedy(), collect(&again)); err != nil {
		t.Fatal(err)
	}
	if strings.Join(first, "|") != strings.Join(again, "|") {
		t.Fatalf("rewind: %q then %q", first, again)
	}
	s.Close()

	small, err := m.NewSession(tl.SessionOptions{ContextLength: 4, KvDType: tl.Float16})
	if err != nil {
		t.Fatal(err)
	}
	if err := small.Feed(1, 2, 3, 4, 5); !errors.Is(err, tl.ErrShape) || !strings.Contains(err.Error(), "context of 4 tokens is full") {
		t.Fatalf("a full context: %v", err)
	}
	m.Close() // the session keeps the weights until it is closed
	if err := small.Feed(1, 2); err != nil || small.Position() != 2 {
		t.Fatalf("a session after its model's Close: %v", err)
	}
	small.Close()
	if err := small.Feed(1); !errors.Is(err, tl.ErrInvalidHandle) {
		t.Fatalf("a closed session: %v", err)
	}
	if _, err := m.NewSession(tl.SessionOptions{}); !errors.Is(err, tl.ErrInvalidHandle) {
		t.Fatalf("a closed model: %v", err)
	}
	if _, err := tl.OpenModel("/nonexistent/model.gguf"); !errors.Is(err, tl.ErrIO) {
		t.Fatalf("a missing file: %v", err)
	}
}

// OpenModelWith: weights converted at open, and the decode layout (nothing to lay out for the
// tiny model's f32 weights: the same tokens, 0 bytes); a dtype the products do not take refused.
func TestModelOptions(t *testing.T) {
	tinyModel(t).Close() // the file is there
	file := os.Getenv("TL_TINY_MODEL")
	var runs [3]string
	for i, o := range []tl.ModelOptions{{}, {Repack: true}, {WeightsDType: tl.BFloat16}} {
		m, err := tl.OpenModelWith(file, o)
		if err != nil {
			t.Fatal(err)
		}
		want := tl.Float32
		if o.WeightsDType != 0 {
			want = o.WeightsDType
		}
		if m.WeightsDType != want || (m.RepackedBytes > 0) != o.Repack { // f32 weights copied as stored
			t.Fatalf("options %+v: weights %v, %d bytes repacked", o, m.WeightsDType, m.RepackedBytes)
		}
		s, err := m.NewSession(tl.SessionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var pieces []string
		if err := s.Generate("abc ab", 8, tl.Greedy(), func(p string) bool { pieces = append(pieces, p); return true }); err != nil {
			t.Fatal(err)
		}
		runs[i] = strings.Join(pieces, "|")
		s.Close()
		m.Close()
	}
	if runs[0] != runs[1] || runs[2] == "" {
		t.Fatalf("stored %q, repacked %q, bf16 %q", runs[0], runs[1], runs[2])
	}
	if _, err := tl.OpenModelWith(file, tl.ModelOptions{WeightsDType: tl.Int32}); !errors.Is(err, tl.ErrDtype) ||
		!strings.Contains(err.Error(), "i32") {
		t.Fatalf("i32 weights: %v", err)
	}
}
