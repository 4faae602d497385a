package org.tensorlife;

import org.tensorlife.raw.tensorlife;

/** The bindings benchmark's baseline: the same tiny adds made from C in one call. */
public final class BenchBaseline {
    private BenchBaseline() {}

    /** Best of 5 runs, nanoseconds per add. */
    public static double perAddFromC(Context ctx, Scope s, Tensor a, Tensor b, int n) {
        double best = Double.MAX_VALUE;
        for (int rep = 0; rep < 5; rep++) {
            long t0 = System.nanoTime();
            ctx.check(tensorlife.tlb_bench_add_loop(ctx.c, s.token, a.bits, b.bits, n));
            best = Math.min(best, (System.nanoTime() - t0) / (double) n);
        }
        return best;
    }
}
