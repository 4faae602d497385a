package org.tensorlife;

import org.tensorlife.raw.SWIGTYPE_p_tl_scope;
import org.tensorlife.raw.tensorlife;

/** A value handle; valid until its scope's reset (then StorageClosedException) or free(). */
public final class Tensor {
    private final Context ctx;
    final long bits;

    Tensor(Context ctx, long bits) {
        this.ctx = ctx;
        this.bits = bits;
    }

    /** [dtype, ndim, dims...]. */
    private long[] info() {
        long[] shape = new long[9];
        long[] dtype = new long[1];
        TensorLifeException.check(tensorlife.tlb_shape(ctx.raw(), bits, shape, dtype));
        long[] r = new long[(int) shape[0] + 2];
        r[0] = dtype[0];
        System.arraycopy(shape, 0, r, 1, (int) shape[0] + 1);
        return r;
    }

    public long[] shape() {
        long[] i = info();
        return java.util.Arrays.copyOfRange(i, 2, i.length);
    }

    private int count() {
        long n = 1;
        for (long d : shape()) n *= d;
        return Math.toIntExact(n);
    }

    public float[] toFloats() {
        float[] v = new float[count()];
        TensorLifeException.check(tensorlife.tlb_read_f32(ctx.raw(), bits, v));
        return v;
    }

    public double[] toDoubles() {
        double[] v = new double[count()];
        TensorLifeException.check(tensorlife.tlb_read_f64(ctx.raw(), bits, v));
        return v;
    }

    public int[] toInts() {
        int[] v = new int[count()];
        TensorLifeException.check(tensorlife.tlb_read_i32(ctx.raw(), bits, v));
        return v;
    }

    /** Copies into dst, which must hold every element. */
    public void read(float[] dst) { TensorLifeException.check(tensorlife.tlb_read_f32(ctx.raw(), bits, dst)); }

    /** {"dtype","shape","data"}: floats exact, non-finite values as "nan", "inf", "-inf". */
    public String toJson() {
        String s = tensorlife.tlb_tensor_to_json(ctx.raw(), bits);
        if (s == null) TensorLifeException.check(tensorlife.tlb_last_status());
        return s;
    }

    /** Frees an ambient tensor; a scoped one only has its handle checked. */
    public void free() { TensorLifeException.check(tensorlife.tlb_free(ctx.raw(), bits)); }

    /** Copies into target (an open scope), or into ambient memory when target is null. */
    public Tensor retain(Scope target) {
        SWIGTYPE_p_tl_scope s = target == null ? null : target.raw();
        return ctx.make(out -> tensorlife.tlb_retain(ctx.raw(), bits, s, out));
    }
}
