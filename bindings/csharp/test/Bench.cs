// The bindings benchmark's baselines: the same tiny adds made from C in one call.  Test code (the
// library lets the "Test" assembly see its handles); not part of TensorLife.dll.
using R = TensorLife.Raw.tensorlife;

namespace TensorLife {

public static class BenchBaseline {
    /// One run of n adds made from C, nanoseconds per add: on a context as tl_context_create
    /// leaves it, or (threadCheck false) with its thread check off, as the binding's record runs it.
    public static double PerAddFromC(Context ctx, Scope s, Tensor a, Tensor b, int n, bool threadCheck = true) {
        var sw = System.Diagnostics.Stopwatch.StartNew();
        ctx.Check(R.tlb_bench_add_loop(ctx.c, s.token, a.bits, b.bits, n, threadCheck ? 1 : 0));
        return sw.Elapsed.TotalMilliseconds * 1e6 / n;
    }
}

}  // namespace TensorLife
