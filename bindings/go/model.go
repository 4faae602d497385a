package tl

import (
	"runtime"
	"sync/atomic"

	"github.com/tensorlife/tensorlife/bindings/go/internal/raw"
)

// Model is an open Llama model (GGUF, or a Hugging Face folder): text in, text out.
//
//	m, err := tl.OpenModel(path)
//	defer m.Close()
//	s, err := m.NewSession(tl.SessionOptions{})
//	defer s.Close()
//	err = s.Generate(prompt, 64, tl.Greedy(), func(piece string) bool { fmt.Print(piece); return true })
//
// Its weights are shared, read-only and not copied, by its sessions; Close leaves its open
// sessions working until they are closed.  A Session is used from one goroutine at a time.
type Model struct {
	c, m   uint64 // the record failures are reported on; the model
	closed uint32
	// What the file holds; Bos and Eos are -1 where the vocabulary has none.
	VocabSize, DModel, Layers, Heads, KvHeads, ContextLength int
	WeightsDType                                             DType
	Bos, Eos                                                 int32
	HasVocabulary                                            bool
	RepackedBytes                                            int64 // the decode copies ModelOptions.Repack made
}

// ModelOptions says how OpenModelWith opens a model (the zero value: as OpenModel does).
// WeightsDType 0 keeps the file's dtypes, else the projections, head and embedding are converted
// at open; Repack also lays q4_0, q8_0, q4_K, q5_K and q6_K weights out for decode and copies the
// file's other projections as stored (the same numbers, faster single tokens, RepackedBytes more
// memory).
type ModelOptions struct {
	WeightsDType DType
	Repack       bool
}

// OpenModel opens a GGUF file (known by its magic, whatever its name), or a folder (or its
// model.safetensors) holding a Hugging Face Llama; every weight is checked once.
func OpenModel(path string) (*Model, error) { return OpenModelWith(path, ModelOptions{}) }

// OpenModelWith opens a model as OpenModel does, with options.
func OpenModelWith(path string, options ModelOptions) (*Model, error) {
	if err := checkName("path", path); err != nil {
		return nil, err
	}
	c := raw.Tlb_context_new()
	if c == 0 {
		return nil, newError(0)
	}
	repack := 0
	if options.Repack {
		repack = 1
	}
	m := raw.Tlb_model_open_with(c, path, int(options.WeightsDType), repack)
	if m == 0 {
		err := newError(c)
		raw.Tlb_context_release(c)
		return nil, err
	}
	model := &Model{c: c, m: m}
	// Sessions hold the Model, so its finalizer runs after theirs.
	runtime.SetFinalizer(model, func(x *Model) {
		x.Close()
		raw.Tlb_context_release(x.c)
	})
	info := make([]int64, 14)
	if raw.Tlb_model_info(c, m, info) != 0 {
		return nil, newError(c)
	}
	model.VocabSize, model.DModel, model.Layers, model.Heads = int(info[0]), int(info[1]), int(info[2]), int(info[3])
	model.KvHeads, model.ContextLength, model.WeightsDType = int(info[4]), int(info[6]), DType(info[7])
	model.Bos, model.Eos, model.HasVocabulary = int32(info[8]), int32(info[9]), info[12] != 0
	model.RepackedBytes = info[13]
	return model, nil
}

// Close releases the model once its open sessions are closed too; a second Close does nothing.
func (model *Model) Close() {
	if atomic.SwapUint32(&model.closed, 1) == 0 {
		raw.Tlb_model_release(model.m)
	}
}

func (model *Model) open() (uint64, error) {
	if atomic.LoadUint32(&model.closed) != 0 {
		return 0, refuse(ErrInvalidHandle, "the model is closed")
	}
	return model.m, nil
}

// Tokenize gives text's token ids (with the BOS the vocabulary asks for when addSpecial;
// control tokens in the text parsed when parseSpecial).
func (model *Model) Tokenize(text string, addSpecial, parseSpecial bool) ([]int32, error) {
	m, err := model.open()
	if err != nil {
		return nil, err
	}
	if err := checkName("text", text); err != nil {
		return nil, err
	}
	ids := make([]int32, len(text)*3+8)
	n := raw.Tlb_tokenize(model.c, m, text, flags(addSpecial, parseSpecial), ids)
	runtime.KeepAlive(model)
	if n < 0 {
		return nil, newError(model.c)
	}
	return ids[:n], nil
}

// Detokenize gives the text of ids (dropping a leading BOS and a trailing EOS when
// removeSpecial; control tokens' text written when unparseSpecial).
func (model *Model) Detokenize(ids []int32, removeSpecial, unparseSpecial bool) (string, error) {
	m, err := model.open()
	if err != nil {
		return "", err
	}
	s := raw.Tlb_detokenize(model.c, m, ids, flags(removeSpecial, unparseSpecial))
	runtime.KeepAlive(model)
	if s == "" && raw.Tlb_status(model.c) != 0 {
		return "", newError(model.c)
	}
	return s, nil
}

func flags(first, second bool) int {
	f := 0
	if first {
		f |= 1
	}
	if second {
		f |= 2
	}
	return f
}

// SessionOptions: ContextLength tokens in the KV cache (0: the model's, at most 4096), the
// cache's KvDType (Float32, Float16 or BFloat16; 0 means Float32), and MaxChunk, the most tokens
// one Feed computes at once (0: 64).
type SessionOptions struct {
	ContextLength int
	KvDType       DType
	MaxChunk      int
}

// Session is a conversation with a model: its own KV cache and sampler state.
type Session struct {
	model  *Model // lives at least as long as its sessions
	s      uint64
	closed uint32
}

// NewSession opens a session on the model.
func (model *Model) NewSession(o SessionOptions) (*Session, error) {
	m, err := model.open()
	if err != nil {
		return nil, err
	}
	kv := o.KvDType
	if kv == 0 {
		kv = Float32
	}
	s := raw.Tlb_session_open(model.c, m, int64(o.ContextLength), int(kv), int64(o.MaxChunk))
	if s == 0 {
		return nil, newError(model.c)
	}
	session := &Session{model: model, s: s}
	runtime.SetFinalizer(session, (*Session).Close)
	return session, nil
}

// Close frees the session's cache; a second Close does nothing.
func (s *Session) Close() {
	if atomic.SwapUint32(&s.closed, 1) == 0 {
		raw.Tlb_session_close(s.s)
	}
}

func (s *Session) open() (uint64, error) {
	if atomic.LoadUint32(&s.closed) != 0 {
		return 0, refuse(ErrInvalidHandle, "the session is closed")
	}
	return s.s, nil
}

func (s *Session) check(status int) error {
	runtime.KeepAlive(s)
	if status != 0 {
		return newError(s.model.c)
	}
	return nil
}

// Position is the number of tokens fed so far.
func (s *Session) Position() int {
	if atomic.LoadUint32(&s.closed) != 0 {
		return 0
	}
	n := int(raw.Tlb_session_position(s.s))
	runtime.KeepAlive(s)
	return n
}

// Feed runs ids through the model at the next positions.
func (s *Session) Feed(ids ...int32) error {
	h, err := s.open()
	if err != nil {
		return err
	}
	return s.check(raw.Tlb_session_feed(s.model.c, h, ids))
}

// FeedText tokenizes text (with the BOS the vocabulary asks for) and feeds it.
func (s *Session) FeedText(text string) error {
	h, err := s.open()
	if err != nil {
		return err
	}
	if err := checkName("text", text); err != nil {
		return err
	}
	return s.check(raw.Tlb_session_feed_text(s.model.c, h, text, 1))
}

// Rewind keeps the first keep tokens and forgets the rest.
func (s *Session) Rewind(keep int) error {
	h, err := s.open()
	if err != nil {
		return err
	}
	return s.check(raw.Tlb_session_rewind(s.model.c, h, int64(keep)))
}

// Sampler says how the next token is chosen (tl_sampler): Temperature 0 is greedy; TopK 0,
// TopP 1, MinP 0 and RepeatPenalty 1 are off.  The same Seed gives the same tokens in every
// binding.
type Sampler struct {
	Temperature               float32
	TopK                      int
	TopP, MinP, RepeatPenalty float32
	RepeatLastN               int
	Seed                      uint64
}

// Greedy is the sampler that takes the most likely token.
func Greedy() Sampler { return Sampler{TopP: 1, RepeatPenalty: 1, RepeatLastN: 64} }

func (p Sampler) numbers() ([]float64, []int64) {
	return []float64{float64(p.Temperature), float64(p.TopP), float64(p.MinP), float64(p.RepeatPenalty)},
		[]int64{int64(p.TopK), int64(p.RepeatLastN), 0, 0}
}

// Sample gives the next token id (not fed).
func (s *Session) Sample(p Sampler) (int32, error) {
	h, err := s.open()
	if err != nil {
		return 0, err
	}
	numbers, ints := p.numbers()
	t := raw.Tlb_session_sample(s.model.c, h, numbers, ints, p.Seed)
	runtime.KeepAlive(s)
	if t < 0 {
		return 0, newError(s.model.c)
	}
	return int32(t), nil
}

// Step makes one token of generation: its text as whole UTF-8 characters, and done when the
// token ended generation (it is not fed then).
func (s *Session) Step(p Sampler) (token int32, text string, done bool, err error) {
	h, err := s.open()
	if err != nil {
		return 0, "", false, err
	}
	numbers, ints := p.numbers()
	text = raw.Tlb_session_generate(s.model.c, h, numbers, ints, p.Seed)
	runtime.KeepAlive(s)
	if text == "" && raw.Tlb_status(s.model.c) != 0 {
		return 0, "", false, newError(s.model.c)
	}
	return int32(ints[2]), text, ints[3] != 0, nil
}

// Generate feeds prompt (unless empty), then calls yield with the text of each generated token
// until maxTokens, a token that ends generation, or yield returning false.
func (s *Session) Generate(prompt string, maxTokens int, p Sampler, yield func(piece string) bool) error {
	if prompt != "" {
		if err := s.FeedText(prompt); err != nil {
			return err
		}
	}
	for i := 0; i < maxTokens; i++ {
		_, text, done, err := s.Step(p)
		if err != nil || done || !yield(text) {
			return err
		}
	}
	return nil
}
