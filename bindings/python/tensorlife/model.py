"""Text in, text out: Llama models (GGUF, or a Hugging Face folder) and their sessions.

    with tensorlife.Model.open("model.gguf") as model, model.new_session() as chat:
        for piece in chat.generate("Once upon a time", max_tokens=64):
            print(piece, end="", flush=True)

A Model's weights are shared, read-only and not copied, by its sessions; each Session holds its
own KV cache and sampler state and may run on its own thread.  generate() yields whole UTF-8
characters (a character cut between tokens comes with the token that completes it).  The same
seed gives the same tokens in every binding and on every machine.  Failures raise the
TensorLifeError subclass of their status with the library's message.
"""
import array as _array
import weakref as _weakref

from . import _tensorlife as _r
from ._lists import ERRORS as _ERRORS, F32, TensorLifeError, InvalidHandleError, DType

_ADD_SPECIAL, _PARSE_SPECIAL = 1, 2
_REMOVE_SPECIAL, _UNPARSE_SPECIAL = 1, 2


def _error(c):
    status = _r.tlb_status(c)
    return _ERRORS.get(status, TensorLifeError)(_r.tlb_message(c), status)


class Sampler:
    """How the next token is chosen (tl_sampler): temperature 0 is greedy; top_k 0, top_p 1,
    min_p 0 and repeat_penalty 1 are off."""

    __slots__ = ("temperature", "top_k", "top_p", "min_p", "repeat_penalty", "repeat_last_n", "seed")

    def __init__(self, temperature=0.0, top_k=0, top_p=1.0, min_p=0.0, repeat_penalty=1.0, repeat_last_n=64, seed=0):
        self.temperature, self.top_k, self.top_p, self.min_p = temperature, top_k, top_p, min_p
        self.repeat_penalty, self.repeat_last_n, self.seed = repeat_penalty, repeat_last_n, seed

    def _numbers(self):
        return (_array.array("d", [self.temperature, self.top_p, self.min_p, self.repeat_penalty]),
                _array.array("q", [self.top_k, self.repeat_last_n, 0, 0]), int(self.seed))


class Model:
    """An open model; Model.open(path) or Model(path).  close() (or `with`) releases it once its
    sessions are closed too.  weights_dtype converts the projections, head and embedding at open
    (None: as the file stores them); repack also lays q4_0, q8_0, q4_K, q5_K and q6_K weights out for
    decode and copies the file's other projections as stored (tl_model_options: the same numbers,
    faster single tokens, repacked_bytes more memory)."""

    def __init__(self, path, weights_dtype=None, repack=False):
        self._m = 0
        c = _r.tlb_context_new_serialised()
        if not c:
            raise _error(0)
        self._c = c
        _weakref.finalize(self, _r.tlb_context_release, c)
        m = _r.tlb_model_open_with(c, str(path), 0 if weights_dtype is None else int(DType(weights_dtype)),
                                   1 if repack else 0)
        if not m:
            raise _error(c)
        self._m = m
        self._release = _weakref.finalize(self, _r.tlb_model_release, m)
        info = _array.array("q", [0] * 14)
        self._check(_r.tlb_model_info(c, m, info))
        (self.vocab_size, self.d_model, self.layers, self.heads, self.kv_heads, self.ffn, self.context_length,
         dtype, self.bos, self.eos, self.eot, self.unk, has_vocab, self.repacked_bytes) = info
        self.weights_dtype = DType(dtype)
        self.has_vocabulary = bool(has_vocab)

    @classmethod
    def open(cls, path, weights_dtype=None, repack=False):
        return cls(path, weights_dtype, repack)

    def _check(self, status):
        if status:
            raise _error(self._c)

    def _open(self):
        if not self._m:
            raise InvalidHandleError("the model is closed")
        return self._m

    def close(self):
        if self._m:
            self._release()
            self._m = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def tokenize(self, text, add_special=True, parse_special=False):
        """The token ids of text, as a list."""
        flags = (_ADD_SPECIAL if add_special else 0) | (_PARSE_SPECIAL if parse_special else 0)
        m, text = self._open(), str(text)
        ids = _array.array("i", [0] * (len(text.encode()) * 3 + 8))
        n = _r.tlb_tokenize(self._c, m, text, flags, ids)
        if n < 0:
            raise _error(self._c)
        return list(ids[:n])

    def detokenize(self, ids, remove_special=False, unparse_special=False):
        flags = (_REMOVE_SPECIAL if remove_special else 0) | (_UNPARSE_SPECIAL if unparse_special else 0)
        s = _r.tlb_detokenize(self._c, self._open(), _array.array("i", ids), flags)
        if s is None:
            raise _error(self._c)
        return s

    def new_session(self, context_length=0, kv_dtype=F32, max_chunk=0):
        """A session: its own KV cache (f32, f16 or bf16) of context_length tokens (0: the
        model's, at most 4096); prompts run as batches of at most max_chunk tokens (0: 64)."""
        return Session(self, context_length, kv_dtype, max_chunk)


class Session:
    """A conversation with a model: feed() ids or feed_text(), sample() or generate(),
    rewind(keep) to a kept prefix.  close() (or `with`) frees its cache."""

    def __init__(self, model, context_length=0, kv_dtype=F32, max_chunk=0):
        self._model = model  # the model lives at least as long as its sessions
        self._c = model._c
        s = _r.tlb_session_open(self._c, model._open(), int(context_length), int(kv_dtype), int(max_chunk))
        if not s:
            raise _error(self._c)
        self._s = s
        self._release = _weakref.finalize(self, _r.tlb_session_close, s)

    def _open(self):
        if not self._s:
            raise InvalidHandleError("the session is closed")
        return self._s

    def close(self):
        if self._s:
            self._release()
            self._s = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def position(self):
        """Tokens fed so far."""
        return _r.tlb_session_position(self._s) if self._s else 0

    def feed(self, ids):
        self._model._check(_r.tlb_session_feed(self._c, self._open(), _array.array("i", ids)))

    def feed_text(self, text, add_special=True, parse_special=False):
        flags = (_ADD_SPECIAL if add_special else 0) | (_PARSE_SPECIAL if parse_special else 0)
        self._model._check(_r.tlb_session_feed_text(self._c, self._open(), str(text), flags))

    def rewind(self, keep):
        self._model._check(_r.tlb_session_rewind(self._c, self._open(), int(keep)))

    def sample(self, sampler=None):
        """The next token id (not fed)."""
        data, info, seed = (sampler or Sampler())._numbers()
        t = _r.tlb_session_sample(self._c, self._open(), data, info, seed)
        if t < 0:
            raise _error(self._c)
        return t

    def step(self, sampler=None):
        """One token of generation: (token, text, done); when done the token ended generation
        and was not fed."""
        data, info, seed = (sampler or Sampler())._numbers()
        text = _r.tlb_session_generate(self._c, self._open(), data, info, seed)
        if text is None:
            raise _error(self._c)
        return info[2], text, bool(info[3])

    def generate(self, prompt=None, max_tokens=64, sampler=None, **sampling):
        """Feeds prompt (text, with BOS as the vocabulary asks) when given, then yields the text
        of each generated token until max_tokens or a token that ends generation.  Keyword
        arguments (temperature=, top_k=, seed=, ...) make a Sampler."""
        if sampler is None:
            sampler = Sampler(**sampling)
        if prompt is not None:
            self.feed_text(prompt)
        for _ in range(max_tokens):
            _, text, done = self.step(sampler)
            if done:
                return
            yield text
