package org.tensorlife;

import java.lang.ref.Cleaner;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.tensorlife.raw.tensorlife;

/** Owns every scope and tensor made through it; close it (or use try-with-resources) to free
 *  everything at once.  Its calls are serialised, so sharing it between threads is safe (if
 *  slow).  A Context that is dropped without close() is released by a Cleaner once collected;
 *  as the collector does not see native memory, every 64th new Context while more than 64
 *  are outstanding asks for a collection (System.gc). */
public final class Context implements AutoCloseable {
    static { Native.ensureLoaded(); }

    static final Cleaner CLEANER = Cleaner.create();
    private static final AtomicLong OUTSTANDING = new AtomicLong(), MADE = new AtomicLong();

    final long c;
    private final Cleaner.Cleanable cleanable;
    private final List<java.nio.ByteBuffer> pinned = new ArrayList<>(); // wrapped memory, kept alive
    private boolean closed;

    public Context() {
        if (OUTSTANDING.incrementAndGet() > 64 && MADE.incrementAndGet() % 64 == 0) System.gc();
        long record = tensorlife.tlb_context_new();
        if (record == 0) {
            OUTSTANDING.decrementAndGet();
            throw TensorLifeException.of(tensorlife.tlb_status(0), tensorlife.tlb_message(0));
        }
        c = record;
        cleanable = CLEANER.register(this, () -> {
            OUTSTANDING.decrementAndGet();
            tensorlife.tlb_context_release(record);
        });
    }

    /** Frees every scope and tensor now; later calls throw InvalidHandleException.  A second
     *  close does nothing. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            tensorlife.tlb_context_close(c);
            pinned.clear();
        }
    }

    TensorLifeException failure() { return TensorLifeException.of(tensorlife.tlb_status(c), tensorlife.tlb_message(c)); }

    void check(int status) {
        if (status != 0) throw failure();
    }

    Tensor made(long bits) {
        if (bits == 0) throw failure();
        return new Tensor(this, bits);
    }

    private Tensor own(Tensor t) {
        if (t != null && t.ctx != this) throw new TensorLifeException.InvalidHandleException("the tensor belongs to another Context");
        return t;
    }

    private long bits(Tensor t) { return t == null ? 0 : own(t).bits; }

    static String name(String what, String s) {
        if (s.indexOf('\0') >= 0) throw new TensorLifeException.InvalidArgumentException(what + " contains a NUL character");
        return s;
    }

    // ---- scopes --------------------------------------------------------------------------------
    /** Pushes a growing scope with an initial slab of slabBytes; it receives every new tensor. */
    public Scope openScope(String name, long slabBytes) { return new Scope(this, name, Growth.GROW, slabBytes, 0); }

    /** Every option of tl_scope_open_ex: FIXED refuses past the slab (ScopeFullException);
     *  maxBytes (0: none) caps the scope. */
    public Scope openScope(String name, Growth growth, long slabBytes, long maxBytes) {
        return new Scope(this, name, growth, slabBytes, maxBytes);
    }

    /** The innermost open scope (a view: dropping it closes nothing), or null when ambient. */
    public Scope currentScope() {
        long token = tensorlife.tlb_scope_current(c);
        if (token < 0) throw failure();
        return token == 0 ? null : new Scope(this, token);
    }

    // ---- tensors -------------------------------------------------------------------------------
    public Tensor fromFloats(long[] shape, float[] data) { return made(tensorlife.tlb_from_f32(c, shape, data)); }
    public Tensor fromDoubles(long[] shape, double[] data) { return made(tensorlife.tlb_from_f64(c, shape, data)); }
    public Tensor fromInts(long[] shape, int[] data) { return made(tensorlife.tlb_from_i32(c, shape, data)); }
    public Tensor zeros(DType dt, long... shape) { return made(tensorlife.tlb_fill(c, dt.code, shape, 0, 0)); }
    public Tensor ones(DType dt, long... shape) { return made(tensorlife.tlb_fill(c, dt.code, shape, 1, 0)); }
    public Tensor full(DType dt, double value, long... shape) { return made(tensorlife.tlb_fill(c, dt.code, shape, 2, value)); }

    /** A tensor over a direct ByteBuffer with no copy (native byte order; its capacity exactly
     *  the shape's bytes).  The buffer is kept alive as long as the context. */
    public synchronized Tensor wrap(DType dt, long[] shape, java.nio.ByteBuffer buffer) {
        if (!buffer.isDirect()) throw new TensorLifeException.InvalidArgumentException("wrap needs a direct ByteBuffer");
        Tensor t = made(tensorlife.tlb_wrap(c, dt.code, shape, buffer));
        pinned.add(buffer);
        return t;
    }

    // ---- ops: one native call each --------------------------------------------------------------
    public Tensor matmul(Tensor a, Tensor b) { return made(tensorlife.tlb_matmul(c, bits(a), bits(b))); }
    /** Elementwise with NumPy broadcasting. */
    public Tensor add(Tensor a, Tensor b) { return made(tensorlife.tlb_add(c, bits(a), bits(b))); }
    public Tensor sub(Tensor a, Tensor b) { return made(tensorlife.tlb_sub(c, bits(a), bits(b))); }
    public Tensor mul(Tensor a, Tensor b) { return made(tensorlife.tlb_mul(c, bits(a), bits(b))); }
    public Tensor div(Tensor a, Tensor b) { return made(tensorlife.tlb_div(c, bits(a), bits(b))); }
    /** Rows of table by int ids: an embedding lookup. */
    public Tensor gatherRows(Tensor table, Tensor ids) { return made(tensorlife.tlb_gather_rows(c, bits(table), bits(ids))); }
    public Tensor relu(Tensor a) { return made(tensorlife.tlb_relu(c, bits(a))); }
    public Tensor gelu(Tensor a) { return made(tensorlife.tlb_gelu(c, bits(a))); }
    public Tensor silu(Tensor a) { return made(tensorlife.tlb_silu(c, bits(a))); }
    public Tensor exp(Tensor a) { return made(tensorlife.tlb_exp(c, bits(a))); }
    public Tensor tanh(Tensor a) { return made(tensorlife.tlb_tanh(c, bits(a))); }
    public Tensor contiguous(Tensor a) { return made(tensorlife.tlb_contiguous(c, bits(a))); }

    /** A new tensor of dtype to: F32 to and from F16, BF16, Q8_0 and Q4_0 (weights as stored). */
    public Tensor convert(Tensor a, DType to) { return made(tensorlife.tlb_convert(c, bits(a), to.code)); }
    /** Over the last axis; w may be null for none. */
    public Tensor rmsnorm(Tensor x, Tensor w, double eps) { return made(tensorlife.tlb_rmsnorm(c, bits(x), bits(w), eps)); }
    /** Over the last axis; w and b may be null for none. */
    public Tensor layernorm(Tensor x, Tensor w, Tensor b, double eps) {
        return made(tensorlife.tlb_layernorm(c, bits(x), bits(w), bits(b), eps));
    }
    public Tensor sum(Tensor a, int axis, boolean keepdim) { return made(tensorlife.tlb_sum(c, bits(a), axis, keepdim ? 1 : 0)); }
    public Tensor mean(Tensor a, int axis, boolean keepdim) { return made(tensorlife.tlb_mean(c, bits(a), axis, keepdim ? 1 : 0)); }
    /** int indices, the axis removed. */
    public Tensor argmax(Tensor a, int axis) { return made(tensorlife.tlb_argmax(c, bits(a), axis)); }
    /** A view: it dies with its base. */
    public Tensor slice(Tensor a, int axis, long start, long length) { return made(tensorlife.tlb_slice(c, bits(a), axis, start, length)); }
    public Tensor transpose(Tensor a, int d0, int d1) { return made(tensorlife.tlb_transpose(c, bits(a), d0, d1)); }
    /** A view where the strides allow it, else a copy; one dim may be -1. */
    public Tensor reshape(Tensor a, long... shape) { return made(tensorlife.tlb_reshape(c, bits(a), shape)); }
    public Tensor concat(int axis, Tensor... ts) {
        long[] handles = new long[ts.length];
        for (int i = 0; i < ts.length; i++) handles[i] = bits(ts[i]);
        return made(tensorlife.tlb_concat(c, handles, axis));
    }
    /** Writes src into dst (a tensor or view, e.g. a KV-cache row), broadcasting src. */
    public void copyInto(Tensor src, Tensor dst) { check(tensorlife.tlb_copy_into(c, bits(src), bits(dst))); }
    public Tensor softmax(Tensor a, int axis) { return made(tensorlife.tlb_softmax(c, bits(a), axis)); }
    public Tensor scale(Tensor a, double s) { return made(tensorlife.tlb_scale(c, bits(a), s)); }
    /** softmax(scale q k^T) v over the first validRows rows of a KV cache, causal by construction:
     *  q [H,Tq,hd], k and v [H,T,hd]; the result is [H,Tq,hd] at every position. */
    public Tensor attention(Tensor q, Tensor k, Tensor v, long validRows, double scale) {
        return made(tensorlife.tlb_attention(c, bits(q), bits(k), bits(v), validRows, scale));
    }
    /** Rotary position embedding of x [..., T, d], row t at position + t, pairs as mode says. */
    public Tensor rope(Tensor x, long position, double theta, RopeMode mode) {
        return made(tensorlife.tlb_rope(c, bits(x), position, theta, mode.code));
    }

    // ---- io ------------------------------------------------------------------------------------
    public SafetensorsFile openSafetensors(String path) { return new SafetensorsFile(this, path, false); }

    /** The file mapped read-only: aligned F32/F64/I32 tensors come out over the mapping, no copy;
     *  they are read-only.  The mapping lives until close() and the last tensor over it dies. */
    public SafetensorsFile mapSafetensors(String path) { return new SafetensorsFile(this, path, true); }

    /** A GGUF file, mapped read-only: its tensors over the mapping in their stored dtype, its
     *  metadata by key. */
    public GgufFile openGguf(String path) { return new GgufFile(this, path); }

    /** Every tensor of a safetensors file, into the current target (F16/BF16 arrive as f32). */
    public java.util.Map<String, Tensor> loadSafetensors(String path) {
        try (SafetensorsFile f = openSafetensors(path)) {
            java.util.Map<String, Tensor> out = new java.util.TreeMap<>();
            for (String name : f.names()) out.put(name, f.get(name));
            return out;
        }
    }

    /** Writes the tensors under their names, atomically. */
    public void saveSafetensors(String path, java.util.Map<String, Tensor> tensors) {
        List<String> names = new ArrayList<>(new java.util.TreeSet<>(tensors.keySet()));
        long[] handles = new long[names.size()];
        for (int i = 0; i < handles.length; i++) {
            if (names.get(i).indexOf('\n') >= 0 || names.get(i).indexOf('\0') >= 0)
                throw new TensorLifeException.InvalidArgumentException("a tensor name contains a newline or a NUL character");
            handles[i] = bits(tensors.get(names.get(i)));
        }
        check(tensorlife.tlb_safetensors_save(c, name("path", path), String.join("\n", names), handles));
    }

    /** Every open scope and the ambient totals, as JSON. */
    public String reportJson() {
        String s = tensorlife.tlb_context_report_json(c);
        if (s == null) throw failure();
        return s;
    }

    /** The reverse of Tensor.toJson, into the current target. */
    public Tensor tensorFromJson(String json) { return made(tensorlife.tlb_tensor_from_json(c, name("JSON text", json))); }

    public static String version() {
        Native.ensureLoaded();
        return tensorlife.tlb_version();
    }

    /** OpenBLAS's thread count, which matmul uses (process-wide). */
    public static void setBlasThreads(int threads) {
        Native.ensureLoaded();
        if (tensorlife.tlb_set_blas_threads(threads) != 0) throw TensorLifeException.of(tensorlife.tlb_status(0), tensorlife.tlb_message(0));
    }

    public static int blasThreads() {
        Native.ensureLoaded();
        return tensorlife.tlb_blas_threads();
    }

    public static int abiVersion() {
        Native.ensureLoaded();
        return tensorlife.tlb_abi_version();
    }
}
