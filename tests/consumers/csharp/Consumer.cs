// A consumer of the TensorLife NuGet package alone: the shared 50-step scenario (ambient
// weights, a scope reset per step, values checked, no growth after step 1) and a tensor kept
// past its reset failing with the storage named.
using System;
using TensorLife;

static class Consumer {
    static int Main() {
        const int d = 8;
        var w = new float[d * d];
        for (int i = 0; i < w.Length; i++) w[i] = (i % 7) / 7f - 0.4f;
        using (var ctx = new Context()) {
            var tw = ctx.FromFloats(new long[] { d, d }, w);
            using (var step = ctx.OpenScope("decode-step", 1 << 16)) {
                ScopeStats? first = null;
                Tensor kept = ctx.Zeros(DType.F32, 1);  // made again each step, dead after its reset
                for (int s = 0; s < 50; s++) {
                    var x = new float[d];
                    for (int i = 0; i < d; i++) x[i] = (s + i) % 5 - 2;
                    var p = ctx.Softmax(ctx.MatMul(ctx.FromFloats(new long[] { 1, d }, x), tw)).ToFloats();
                    var logits = new double[d];
                    double top = double.NegativeInfinity, total = 0;
                    for (int j = 0; j < d; j++) {
                        for (int k = 0; k < d; k++) logits[j] += (double)x[k] * w[k * d + j];
                        top = Math.Max(top, logits[j]);
                    }
                    foreach (var l in logits) total += Math.Exp(l - top);
                    for (int j = 0; j < d; j++)
                        if (Math.Abs(p[j] - Math.Exp(logits[j] - top) / total) > 1e-5) { Console.WriteLine($"step {s} col {j}"); return 1; }
                    kept = ctx.Zeros(DType.F32, 1);
                    step.Reset();
                    var st = step.Stats();
                    if (first == null) first = st;
                    else if (st.SlabBytes != first.Value.SlabBytes || st.GrowEvents != first.Value.GrowEvents) { Console.WriteLine($"step {s} grew"); return 1; }
                }
                try {
                    kept.ToFloats();
                    Console.WriteLine("a tensor kept past its reset was read");
                    return 1;
                } catch (StorageClosedException e) {
                    if (!e.Message.Contains("storage 'decode-step'")) { Console.WriteLine(e.Message); return 1; }
                    Console.WriteLine($"csharp consumer ok: tensorlife {Context.Version}, 50 steps, stale tensor refused: {e.Message}");
                }
            }
        }
        return 0;
    }
}
