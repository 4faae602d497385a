"""A consumer of the installed wheel, text in and text out: the tiny model the C tests write,
opened with a context manager, two sessions, the generator, and the tokens the C API drew from
the same seed (passed in, as the runner printed them).
    python model_scenario.py MODEL.gguf EXPECTED_IDS"""
import sys

import tensorlife as tl

path, expected = sys.argv[1], [int(x) for x in sys.argv[2].split(",")]
with tl.Model.open(path) as model, model.new_session() as chat:
    pieces = list(chat.generate("abc ab", max_tokens=len(expected), temperature=0.9, seed=5))
    prompt_len = len(model.tokenize("abc ab"))
    with model.new_session() as again:
        again.feed_text("abc ab")
        ids = []
        for _ in expected:
            t = again.sample(tl.Sampler(temperature=0.9, seed=5))
            again.feed([t])
            ids.append(t)
    assert ids == expected, (ids, expected)
    assert chat.position == prompt_len + len(pieces), (chat.position, prompt_len, len(pieces))
    text = "".join(pieces)
    assert isinstance(model.detokenize(ids), str)
    try:
        chat.feed([model.vocab_size])
        sys.exit("an id past the vocabulary was fed")
    except tl.InvalidArgumentError as e:
        assert "not in the vocabulary" in str(e), e
try:
    chat.feed([1])
    sys.exit("a closed session was used")
except tl.InvalidHandleError:
    pass
print(f"python model ok: {len(ids)} tokens as the C API drew them, text {text!r}")
