"""A consumer of the installed tensorlife wheel: the shared 50-step scenario (weights ambient, a
scope reset per step, values checked against math here, no growth after step 1) and a tensor
kept past its reset raising StorageClosedError that names the storage."""
import math
import sys

import tensorlife as tl

D = 8
w = [(i % 7) / 7 - 0.4 for i in range(D * D)]
with tl.Context() as ctx:
    tw = ctx.tensor(w, shape=(D, D))
    with ctx.open_scope("decode-step", 1 << 16) as step:
        first = kept = None
        for s in range(50):
            x = [float((s + i) % 5 - 2) for i in range(D)]
            p = ctx.softmax(ctx.matmul(ctx.tensor(x, shape=(1, D)), tw)).tolist()
            logits = [sum(x[k] * w[k * D + j] for k in range(D)) for j in range(D)]
            top = max(logits)
            total = sum(math.exp(v - top) for v in logits)
            for j in range(D):
                assert abs(p[j] - math.exp(logits[j] - top) / total) < 1e-5, (s, j)
            kept = ctx.tensor([0.0])
            step.reset()
            st = step.stats()
            first = first or st
            assert (st.slab_bytes, st.grow_events) == (first.slab_bytes, first.grow_events), s
        try:
            kept.tolist()
            sys.exit("a tensor kept past its reset was read")
        except tl.StorageClosedError as e:
            assert "storage 'decode-step'" in str(e), e
            print(f"python consumer ok: tensorlife {tl.version()} from {tl.__file__}, 50 steps, stale tensor refused: {e}")
