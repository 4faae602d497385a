import org.tensorlife.Context;
import org.tensorlife.Scope;
import org.tensorlife.Tensor;
import org.tensorlife.TensorLifeException;

/** A consumer of the installed tensorlife.jar alone: the shared 50-step scenario (ambient
 *  weights, a scope reset per step, values checked, no growth after step 1) and a tensor kept
 *  past its reset failing with the storage named. */
public final class Consumer {
    public static void main(String[] args) {
        final int d = 8;
        float[] w = new float[d * d];
        for (int i = 0; i < w.length; i++) w[i] = (i % 7) / 7f - 0.4f;
        try (Context ctx = new Context()) {
            Tensor tw = ctx.fromFloats(new long[] {d, d}, w);
            try (Scope step = ctx.openScope("decode-step", 1 << 16)) {
                org.tensorlife.ScopeStats first = null;
                Tensor kept = null;
                for (int s = 0; s < 50; s++) {
                    float[] x = new float[d];
                    for (int i = 0; i < d; i++) x[i] = (s + i) % 5 - 2;
                    float[] p = ctx.softmax(ctx.matmul(ctx.fromFloats(new long[] {1, d}, x), tw), -1).toFloats();
                    double[] logits = new double[d];
                    double top = Double.NEGATIVE_INFINITY, total = 0;
                    for (int j = 0; j < d; j++) {
                        for (int k = 0; k < d; k++) logits[j] += (double) x[k] * w[k * d + j];
                        top = Math.max(top, logits[j]);
                    }
                    for (double l : logits) total += Math.exp(l - top);
                    for (int j = 0; j < d; j++)
                        if (Math.abs(p[j] - Math.exp(logits[j] - top) / total) > 1e-5) throw new AssertionError("step " + s + " col " + j);
                    kept = ctx.zeros(org.tensorlife.DType.F32, 1);
                    step.reset();
                    org.tensorlife.ScopeStats st = step.stats();
                    if (first == null) first = st;
                    else if (st.slabBytes() != first.slabBytes() || st.growEvents() != first.growEvents())
                        throw new AssertionError("step " + s + " grew");
                }
                try {
                    kept.toFloats();
                    throw new AssertionError("a tensor kept past its reset was read");
                } catch (TensorLifeException.StorageClosedException e) {
                    if (!e.getMessage().contains("storage 'decode-step'")) throw new AssertionError(e.getMessage());
                    System.out.println("java consumer ok: tensorlife " + Context.version() + ", 50 steps, stale tensor refused: " + e.getMessage());
                }
            }
        }
    }
}
