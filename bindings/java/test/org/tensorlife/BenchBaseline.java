package org.tensorlife;

import org.tensorlife.raw.tensorlife;

/** The bindings benchmark's baselines: the same tiny adds made from C in one call, and the
 *  crossing alone.  Test code, in the library's package on the class path to reach its handles;
 *  not part of the jar. */
public final class BenchBaseline {
    private BenchBaseline() {}

    /** One run of n adds made from C, nanoseconds per add: on a context as tl_context_create
     *  leaves it, or (threadCheck false) with its thread check off, as the binding's record runs it. */
    public static double perAddFromC(Context ctx, Scope s, Tensor a, Tensor b, int n, boolean threadCheck) {
        long t0 = System.nanoTime();
        ctx.check(tensorlife.tlb_bench_add_loop(ctx.c, s.token, a.bits, b.bits, n, threadCheck ? 1 : 0));
        return (System.nanoTime() - t0) / (double) n;
    }

    /** n JNI calls of a C function that does nothing (the ABI version), nanoseconds per call: the
     *  crossing alone, which no binding can remove.  sink keeps the calls. */
    public static double perTrivialCall(int n, int[] sink) {
        long t0 = System.nanoTime();
        int sum = 0;
        for (int i = 0; i < n; i++) sum += tensorlife.tlb_abi_version();
        sink[0] += sum;
        return (System.nanoTime() - t0) / (double) n;
    }
}
