package org.tensorlife;

import org.tensorlife.raw.tensorlife;

/** A value handle; valid until its scope's reset (then StorageClosedException) or free(). */
public final class Tensor {
    final Context ctx;
    final long bits;

    Tensor(Context ctx, long bits) {
        this.ctx = ctx;
        this.bits = bits;
    }

    /** The whole tl_tensor_info: strides and offset in elements; storage is the scope's name or
     *  "ambient"; readOnly over a read-only mapping. */
    public record Info(DType dtype, long[] shape, long[] strides, long offset, String storage, long generation,
                       long count, boolean readOnly) {
        static Info of(long[] v, String storage) {
            int n = (int) v[InfoSlots.NDIM];
            return new Info(DType.of((int) v[InfoSlots.DTYPE]),
                            java.util.Arrays.copyOfRange(v, InfoSlots.SHAPE, InfoSlots.SHAPE + n),
                            java.util.Arrays.copyOfRange(v, InfoSlots.STRIDES, InfoSlots.STRIDES + n),
                            v[InfoSlots.OFFSET], storage, v[InfoSlots.GENERATION], v[InfoSlots.COUNT],
                            v[InfoSlots.READ_ONLY] != 0);
        }
    }

    public Info info() {
        long[] v = new long[InfoSlots.SLOTS];
        ctx.check(tensorlife.tlb_info(ctx.c, bits, v));
        return Info.of(v, tensorlife.tlb_storage(ctx.c, bits));
    }

    public long[] shape() { return info().shape(); }

    private int count() { return Math.toIntExact(info().count()); }

    /** The elements in logical order; the tensor must be F32 (bits are never reinterpreted). */
    public float[] toFloats() {
        float[] v = new float[count()];
        ctx.check(tensorlife.tlb_read_f32(ctx.c, bits, v));
        return v;
    }

    public double[] toDoubles() {
        double[] v = new double[count()];
        ctx.check(tensorlife.tlb_read_f64(ctx.c, bits, v));
        return v;
    }

    public int[] toInts() {
        int[] v = new int[count()];
        ctx.check(tensorlife.tlb_read_i32(ctx.c, bits, v));
        return v;
    }

    /** Copies into dst, which must hold every element. */
    public void read(float[] dst) { ctx.check(tensorlife.tlb_read_f32(ctx.c, bits, dst)); }

    /** {"dtype","shape","data"}: floats exact, non-finite values as "nan", "inf", "-inf". */
    public String toJson() {
        String s = tensorlife.tlb_tensor_to_json(ctx.c, bits);
        if (s == null) throw ctx.failure();
        return s;
    }

    /** Frees an ambient tensor; a scoped one only has its handle checked. */
    public void free() { ctx.check(tensorlife.tlb_free(ctx.c, bits)); }

    /** Copies into target (an open scope), or into ambient memory when target is null. */
    public Tensor retain(Scope target) {
        if (target != null && target.ctx != ctx)
            throw new TensorLifeException.InvalidHandleException("the scope belongs to another Context");
        return ctx.made(tensorlife.tlb_retain(ctx.c, bits, target == null ? 0 : target.token));
    }
}
