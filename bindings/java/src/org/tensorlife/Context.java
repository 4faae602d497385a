package org.tensorlife;

import org.tensorlife.raw.SWIGTYPE_p_tl_context;
import org.tensorlife.raw.tensorlife;

/** Owns every scope and tensor made through it.  One thread at a time; close it (or use
 *  try-with-resources) to free everything at once. */
public final class Context implements AutoCloseable {
    static { Native.ensureLoaded(); }

    private SWIGTYPE_p_tl_context ctx;

    public Context() {
        ctx = tensorlife.tlb_context_new();
        if (ctx == null) TensorLifeException.check(tensorlife.tlb_last_status());
    }

    SWIGTYPE_p_tl_context raw() {
        if (ctx == null) throw new TensorLifeException.InvalidHandleException(tensorlife.E_INVALID_HANDLE, "the context is closed");
        return ctx;
    }

    /** Frees every scope and tensor.  A second close does nothing. */
    @Override
    public void close() {
        if (ctx != null) {
            tensorlife.tlb_context_free(ctx);
            ctx = null;
        }
    }

    boolean isOpen() { return ctx != null; }

    /** Pushes a scope with an initial slab of slabBytes; the innermost open scope receives every new tensor. */
    public Scope openScope(String name, long slabBytes) {
        return new Scope(this, name, slabBytes);
    }

    Tensor made(long[] out) { return new Tensor(this, out[0]); }

    public Tensor fromFloats(long[] shape, float[] data) {
        long[] out = new long[1];
        TensorLifeException.check(tensorlife.tlb_from_f32(raw(), shape, data, out));
        return made(out);
    }

    public Tensor fromDoubles(long[] shape, double[] data) {
        long[] out = new long[1];
        TensorLifeException.check(tensorlife.tlb_from_f64(raw(), shape, data, out));
        return made(out);
    }

    public Tensor fromInts(long[] shape, int[] data) {
        long[] out = new long[1];
        TensorLifeException.check(tensorlife.tlb_from_i32(raw(), shape, data, out));
        return made(out);
    }

    public Tensor matmul(Tensor a, Tensor b) {
        long[] out = new long[1];
        TensorLifeException.check(tensorlife.tlb_matmul(raw(), a.bits, b.bits, out));
        return made(out);
    }

    /** Elementwise with NumPy broadcasting. */
    public Tensor add(Tensor a, Tensor b) {
        long[] out = new long[1];
        TensorLifeException.check(tensorlife.tlb_add(raw(), a.bits, b.bits, out));
        return made(out);
    }

    public Tensor mul(Tensor a, Tensor b) {
        long[] out = new long[1];
        TensorLifeException.check(tensorlife.tlb_mul(raw(), a.bits, b.bits, out));
        return made(out);
    }

    public Tensor softmax(Tensor a, int axis) {
        long[] out = new long[1];
        TensorLifeException.check(tensorlife.tlb_softmax(raw(), a.bits, axis, out));
        return made(out);
    }

    public Tensor scale(Tensor a, double s) {
        long[] out = new long[1];
        TensorLifeException.check(tensorlife.tlb_scale(raw(), a.bits, s, out));
        return made(out);
    }

    public static String version() {
        Native.ensureLoaded();
        return tensorlife.tlb_version();
    }
}
