// The bindings benchmark's baseline: the same tiny adds made from C in one call.  Test code (the
// library lets the "Test" assembly see its handles); not part of TensorLife.dll.
using R = TensorLife.Raw.tensorlife;

namespace TensorLife {

public static class BenchBaseline {
    /// One run of n adds made from C, nanoseconds per add.
    public static double PerAddFromC(Context ctx, Scope s, Tensor a, Tensor b, int n) {
        var sw = System.Diagnostics.Stopwatch.StartNew();
        ctx.Check(R.tlb_bench_add_loop(ctx.c, s.token, a.bits, b.bits, n));
        return sw.Elapsed.TotalMilliseconds * 1e6 / n;
    }
}

}  // namespace TensorLife
