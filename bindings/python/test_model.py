"""Text in, text out from Python: the C tests' tiny model (tiny.gguf in the working folder, which
bindings/python/test.sh writes with tests/packaging/write_tiny_llama)."""
import os

import pytest

import tensorlife as tl

MODEL = os.path.abspath("tiny.gguf")


def test_generate_with_context_managers():
    with tl.Model.open(MODEL) as model, model.new_session(context_length=64) as chat:
        assert (model.vocab_size, model.layers, model.kv_heads, model.has_vocabulary) == (271, 2, 2, True)
        assert model.tokenize("abc ab") == [model.bos, 270, 265]
        pieces = list(chat.generate("abc ab", max_tokens=10))
        assert all(isinstance(p, str) for p in pieces)
        greedy = chat.position
        chat.rewind(3)
        again = list(chat.generate(max_tokens=10))
        assert again == pieces and chat.position == greedy


def test_seeds_repeat_across_sessions_and_sampler_settings():
    with tl.Model(MODEL) as model:
        runs = []
        for _ in range(2):
            with model.new_session(kv_dtype=tl.F16) as s:
                s.feed_text("abc")
                runs.append([s.step(tl.Sampler(temperature=1.2, top_k=20, top_p=0.9, min_p=0.01, seed=77))[0]
                             for _ in range(12)])
        assert runs[0] == runs[1]


def test_misuse_raises_with_the_message():
    model = tl.Model(MODEL)
    s = model.new_session(context_length=4)
    with pytest.raises(tl.ShapeError, match="context of 4 tokens is full"):
        s.feed([1, 2, 3, 4, 5])
    with pytest.raises(tl.ShapeError, match="nothing fed yet"):
        s.sample()
    with pytest.raises(tl.InvalidArgumentError, match="not in the vocabulary"):
        s.feed([271])
    with pytest.raises(UnicodeEncodeError):  # a str holds no invalid UTF-8 but a lone surrogate
        model.tokenize("\udcff")
    model.close()  # the session keeps the model's weights until it closes
    s.feed([1, 2])
    assert s.position == 2
    s.close()
    with pytest.raises(tl.InvalidHandleError, match="session is closed"):
        s.feed([1])
    with pytest.raises(tl.InvalidHandleError, match="model is closed"):
        model.new_session()
    with pytest.raises(tl.IoError):
        tl.Model("/nonexistent/model.gguf")


def test_open_options_convert_and_repack():
    with tl.Model(MODEL) as stored, tl.Model(MODEL, repack=True) as repacked, \
            tl.Model.open(MODEL, weights_dtype=tl.BF16) as halves:
        assert (stored.weights_dtype, stored.repacked_bytes) == (tl.F32, 0)
        assert repacked.repacked_bytes > 0  # f32 weights: copied as stored
        assert halves.weights_dtype == tl.BF16
        runs = []
        for model in (stored, repacked, halves):
            with model.new_session() as s:
                runs.append(list(s.generate("abc ab", max_tokens=8)))
        assert runs[0] == runs[1] and len(runs[2]) > 0
    with pytest.raises(tl.DtypeError, match="i32"):
        tl.Model(MODEL, weights_dtype=tl.I32)
