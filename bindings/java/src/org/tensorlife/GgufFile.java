package org.tensorlife;

import org.tensorlife.raw.tensorlife;

/** An open GGUF file (versions 2 and 3, as llama.cpp writes them), mapped read-only: get() gives a
 *  read-only tensor over the mapping in its stored dtype (Q8_0, Q4_0, F16, ...); the metadata is
 *  read by type ({@code item} &lt; 0 for a scalar key, else that item of an array). */
public final class GgufFile implements AutoCloseable {
    private final Context ctx;
    private long f;

    /** A key's type, and for an array its items' type and length (a scalar: its own type, 1). */
    public record KeyType(GgufType type, GgufType itemType, long count) {}

    GgufFile(Context ctx, String path) {
        this.ctx = ctx;
        f = tensorlife.tlb_gguf_open(ctx.c, Context.name("path", path));
        if (f == 0) throw ctx.failure();
    }

    private long open() {
        if (f == 0) throw new TensorLifeException.InvalidHandleException("the GGUF file is closed");
        return f;
    }

    /** The tensors' names in file order. */
    public java.util.List<String> names() {
        long h = open(), n = tensorlife.tlb_gguf_tensor_count(h);
        java.util.List<String> out = new java.util.ArrayList<>();
        for (long i = 0; i < n; i++) out.add(tensorlife.tlb_gguf_tensor_name(h, i));
        return out;
    }

    /** The metadata keys in file order. */
    public java.util.List<String> keys() {
        long h = open(), n = tensorlife.tlb_gguf_key_count(h);
        java.util.List<String> out = new java.util.ArrayList<>();
        for (long i = 0; i < n; i++) out.add(tensorlife.tlb_gguf_key_name(h, i));
        return out;
    }

    /** One tensor over the mapping (NotFoundException for a name the file does not hold). */
    public Tensor get(String name) { return ctx.made(tensorlife.tlb_gguf_get(ctx.c, open(), Context.name("tensor name", name))); }

    public KeyType keyType(String key) {
        long[] v = new long[3];
        ctx.check(tensorlife.tlb_gguf_key_type(ctx.c, open(), Context.name("key", key), v));
        return new KeyType(GgufType.of(v[0]), GgufType.of(v[1]), v[2]);
    }

    /** An integer or bool key, or item {@code item} (&gt;= 0) of an array of numbers. */
    public long getInt(String key, long item) {
        long[] v = new long[1];
        ctx.check(tensorlife.tlb_gguf_int(ctx.c, open(), Context.name("key", key), item, v));
        return v[0];
    }

    /** Any number key as a double, or item {@code item} (&gt;= 0) of an array of numbers. */
    public double getFloat(String key, long item) {
        double[] v = new double[1];
        ctx.check(tensorlife.tlb_gguf_float(ctx.c, open(), Context.name("key", key), item, v));
        return v[0];
    }

    /** A string key, or item {@code item} (&gt;= 0) of an array of strings. */
    public String getString(String key, long item) {
        String s = tensorlife.tlb_gguf_string(ctx.c, open(), Context.name("key", key), item);
        if (s == null) throw ctx.failure();
        return s;
    }

    @Override
    public void close() {
        tensorlife.tlb_gguf_close(f);
        f = 0;
    }
}
