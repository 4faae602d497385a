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

    /** One C call writing one handle: checked, then wrapped. */
    interface Call { int into(long[] out); }

    Tensor make(Call call) {
        long[] out = new long[1];
        TensorLifeException.check(call.into(out));
        return made(out);
    }

    public Tensor fromFloats(long[] shape, float[] data) {
        return make(out -> tensorlife.tlb_from_f32(raw(), shape, data, out));
    }

    public Tensor fromDoubles(long[] shape, double[] data) {
        return make(out -> tensorlife.tlb_from_f64(raw(), shape, data, out));
    }

    public Tensor fromInts(long[] shape, int[] data) {
        return make(out -> tensorlife.tlb_from_i32(raw(), shape, data, out));
    }

    public Tensor matmul(Tensor a, Tensor b) {
        return make(out -> tensorlife.tlb_matmul(raw(), a.bits, b.bits, out));
    }

    /** Elementwise with NumPy broadcasting. */
    public Tensor add(Tensor a, Tensor b) {
        return make(out -> tensorlife.tlb_add(raw(), a.bits, b.bits, out));
    }

    public Tensor mul(Tensor a, Tensor b) {
        return make(out -> tensorlife.tlb_mul(raw(), a.bits, b.bits, out));
    }

    private interface Unary { int call(SWIGTYPE_p_tl_context c, long a, long[] out); }

    private Tensor unary(Unary f, Tensor a) { return make(out -> f.call(raw(), a.bits, out)); }

    public Tensor relu(Tensor a) { return unary(tensorlife::tlb_relu, a); }
    public Tensor gelu(Tensor a) { return unary(tensorlife::tlb_gelu, a); }
    public Tensor silu(Tensor a) { return unary(tensorlife::tlb_silu, a); }
    public Tensor exp(Tensor a) { return unary(tensorlife::tlb_exp, a); }
    public Tensor tanh(Tensor a) { return unary(tensorlife::tlb_tanh, a); }
    public Tensor contiguous(Tensor a) { return unary(tensorlife::tlb_contiguous, a); }

    public Tensor sub(Tensor a, Tensor b) {
        return make(out -> tensorlife.tlb_sub(raw(), a.bits, b.bits, out));
    }

    public Tensor div(Tensor a, Tensor b) {
        return make(out -> tensorlife.tlb_div(raw(), a.bits, b.bits, out));
    }

    /** Over the last axis; w may be null for none. */
    public Tensor rmsnorm(Tensor x, Tensor w, double eps) {
        return make(out -> tensorlife.tlb_rmsnorm(raw(), x.bits, w == null ? 0 : w.bits, eps, out));
    }

    /** Over the last axis; w and b may be null for none. */
    public Tensor layernorm(Tensor x, Tensor w, Tensor b, double eps) {
        return make(out -> tensorlife.tlb_layernorm(raw(), x.bits, w == null ? 0 : w.bits, b == null ? 0 : b.bits, eps, out));
    }

    private Tensor reduce(Tensor a, int kind, int axis, boolean keepdim) {
        return make(out -> tensorlife.tlb_reduce(raw(), a.bits, kind, axis, keepdim ? 1 : 0, out));
    }

    public Tensor sum(Tensor a, int axis, boolean keepdim) { return reduce(a, 0, axis, keepdim); }
    public Tensor mean(Tensor a, int axis, boolean keepdim) { return reduce(a, 1, axis, keepdim); }
    /** int indices, the axis removed. */
    public Tensor argmax(Tensor a, int axis) { return reduce(a, 2, axis, false); }

    /** A view: it dies with its base. */
    public Tensor slice(Tensor a, int axis, long start, long length) {
        return make(out -> tensorlife.tlb_slice(raw(), a.bits, axis, start, length, out));
    }

    public Tensor transpose(Tensor a, int d0, int d1) {
        return make(out -> tensorlife.tlb_transpose(raw(), a.bits, d0, d1, out));
    }

    /** A view where the strides allow it, else a copy; one dim may be -1. */
    public Tensor reshape(Tensor a, long... shape) {
        return make(out -> tensorlife.tlb_reshape(raw(), a.bits, shape, out));
    }

    public Tensor concat(int axis, Tensor... ts) {
        long[] bits = new long[ts.length];
        for (int i = 0; i < ts.length; i++) bits[i] = ts[i].bits;
        return make(out -> tensorlife.tlb_concat(raw(), bits, axis, out));
    }

    /** Rows of table by int ids: an embedding lookup. */
    public Tensor gatherRows(Tensor table, Tensor ids) {
        return make(out -> tensorlife.tlb_gather_rows(raw(), table.bits, ids.bits, out));
    }

    /** Writes src into dst (a tensor or view, e.g. a KV-cache row), broadcasting src. */
    public void copyInto(Tensor src, Tensor dst) {
        TensorLifeException.check(tensorlife.tlb_copy_into(raw(), src.bits, dst.bits));
    }

    public Tensor softmax(Tensor a, int axis) {
        return make(out -> tensorlife.tlb_softmax(raw(), a.bits, axis, out));
    }

    public Tensor scale(Tensor a, double s) {
        return make(out -> tensorlife.tlb_scale(raw(), a.bits, s, out));
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
                out.put(name, make(o -> tensorlife.tlb_st_get(raw(), f, name, o)));
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
        return make(o -> tensorlife.tlb_tensor_from_json(raw(), json, o));
    }

    public static String version() {
        Native.ensureLoaded();
        return tensorlife.tlb_version();
    }
}
