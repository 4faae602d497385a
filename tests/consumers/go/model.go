package main

import (
	"errors"
	"fmt"
	"strings"

	tl "github.com/tensorlife/tensorlife/bindings/go"
)

// Text in, text out on the model given (the C tests' tiny model): the tokens the C API drew
// from the same seed (given as "1,2,3"), a generator's callback, errors.Is on a misuse.
func runModel(path, expected string) error {
	m, err := tl.OpenModel(path)
	if err != nil {
		return err
	}
	defer m.Close()
	s, err := m.NewSession(tl.SessionOptions{})
	if err != nil {
		return err
	}
	defer s.Close()
	sampler := tl.Greedy()
	sampler.Temperature, sampler.Seed = 0.9, 5
	var text strings.Builder
	want := strings.Split(expected, ",")
	if err := s.Generate("abc ab", len(want), sampler, func(piece string) bool { text.WriteString(piece); return true }); err != nil {
		return err
	}
	again, err := m.NewSession(tl.SessionOptions{})
	if err != nil {
		return err
	}
	defer again.Close()
	if err := again.FeedText("abc ab"); err != nil {
		return err
	}
	var got []string
	for range want {
		t, err := again.Sample(sampler)
		if err != nil {
			return err
		}
		if err := again.Feed(t); err != nil {
			return err
		}
		got = append(got, fmt.Sprint(t))
	}
	if strings.Join(got, ",") != expected {
		return fmt.Errorf("tokens %s, the C API's %s", strings.Join(got, ","), expected)
	}
	if err := s.Feed(int32(m.VocabSize)); !errors.Is(err, tl.ErrInvalidArgument) {
		return fmt.Errorf("an id past the vocabulary: %v", err)
	}
	fmt.Printf("go model ok: %d tokens as the C API drew them, %d bytes of text\n", len(got), text.Len())
	return nil
}
