"""A decode-loop step from an installed wheel, on whatever platform runs it (scripts/cross.sh
runs it with Debian's arm64 Python under qemu-user): ops, a scope reset, a stale tensor refused."""
import tensorlife

with tensorlife.Context() as ctx:
    step = ctx.open_scope("decode-step")
    x = ctx.tensor([1.0, 2.0, 3.0], shape=(1, 3))
    y = ctx.softmax(ctx.add(x, x))
    got = y.tolist()  # flat, in row order
    assert abs(sum(got) - 1.0) < 1e-6 and got[0] < got[1] < got[2], got
    step.reset()
    try:
        y.tolist()
        raise SystemExit("a tensor of a reset scope was read")
    except tensorlife.StorageClosedError as e:
        refused = str(e)
print(f"wheel ok: tensorlife {tensorlife.version()} from {tensorlife.__file__}; stale tensor refused: {refused}")
