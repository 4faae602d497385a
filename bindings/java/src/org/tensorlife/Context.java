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

    /** Every tensor of a safetensors file, into the current target (F16/BF16 arrive as f32). */
    public java.util.Map<String, Tensor> loadSafetensors(String path) {
        org.tensorlife.raw.SWIGTYPE_p_tl_st_file f = tensorlife.tlb_st_open(raw(), path);
        if (f == null) TensorLifeException.check(tensorlife.tlb_last_status());
        try {
            java.util.Map<String, Tensor> out = new java.util.TreeMap<>();
            long n = tensorlife.tlb_st_count(f);
            for (long i = 0; i < n; i++) {
                String name = tensorlife.tlb_st_name(f, i);
                long[] o = new long[1];
                TensorLifeException.check(tensorlife.tlb_st_get(raw(), f, name, o));
                out.put(name, made(o));
            }
            return out;
        } finally {
            tensorlife.tlb_st_close(f);
        }
    }

    /** Writes the tensors under their names (no newline in a name). */
    public void saveSafetensors(String path, java.util.Map<String, Tensor> tensors) {
        java.util.List<String> names = new java.util.ArrayList<>(new java.util.TreeSet<>(tensors.keySet()));
        long[] handles = new long[names.size()];
        for (int i = 0; i < handles.length; i++) {
            if (names.get(i).contains("\n")) throw new TensorLifeException.InvalidArgumentException(tensorlife.E_INVALID_ARGUMENT, "a name contains a newline");
            handles[i] = tensors.get(names.get(i)).bits;
        }
        TensorLifeException.check(tensorlife.tlb_safetensors_save(raw(), path, String.join("\n", names), handles));
    }

    /** Every open scope and the ambient totals, as JSON. */
    public String reportJson() {
        String s = tensorlife.tlb_context_report_json(raw());
        if (s == null) TensorLifeException.check(tensorlife.tlb_last_status());
        return s;
    }

    /** The reverse of Tensor.toJson, into the current target. */
    public Tensor tensorFromJson(String json) {
        long[] o = new long[1];
        TensorLifeException.check(tensorlife.tlb_tensor_from_json(raw(), json, o));
        return made(o);
    }

    public static String version() {
        Native.ensureLoaded();
        return tensorlife.tlb_version();
    }
}
