"""A decode step's logits to NumPy and PyTorch with no copy, and what the scope reset then means."""
import numpy as np
import torch

import tensorlife as tl

with tl.Context() as ctx:
    w = ctx.tensor(np.random.default_rng(0).standard_normal((64, 256), dtype=np.float32))
    with ctx.open_scope("decode-step") as step:
        for t in range(3):
            x = ctx.tensor(np.full((1, 64), 0.1 * t, dtype=np.float32))
            logits = np.asarray(ctx.matmul(x, w))      # the tensor's own memory, no copy
            probs = torch.from_dlpack(ctx.softmax(ctx.matmul(x, w)))  # likewise, as a torch tensor
            token = int(logits.argmax())
            assert token == int(probs.argmax())
            try:
                step.reset()                            # refused: `logits` still reads the slab
            except tl.BusyError as e:
                print("reset refused while exported:", str(e)[:60], "...")
            del logits, probs                           # release the views...
            step.reset()                                # ...and the slab is reused
    print("python zero-copy ok: step", t, "token", token)
