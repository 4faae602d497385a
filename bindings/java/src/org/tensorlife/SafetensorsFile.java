package org.tensorlife;

import org.tensorlife.raw.tensorlife;

/** An open safetensors file: its header checked at open, a tensor's data read at get(). */
public final class SafetensorsFile implements AutoCloseable {
    private final Context ctx;
    private long f;

    SafetensorsFile(Context ctx, String path, boolean mapped) {
        this.ctx = ctx;
        String p = Context.name("path", path);
        f = mapped ? tensorlife.tlb_st_map(ctx.c, p) : tensorlife.tlb_st_open(ctx.c, p);
        if (f == 0) throw ctx.failure();
    }

    /** Whether get(name) gives a read-only tensor over the mapping (else a copy). */
    public boolean maps(String name) { return name.indexOf('\0') < 0 && tensorlife.tlb_st_maps(f, name) == 1; }

    /** Names in file order. */
    public java.util.List<String> names() {
        long n = tensorlife.tlb_st_count(f);
        java.util.List<String> out = new java.util.ArrayList<>();
        for (long i = 0; i < n; i++) out.add(tensorlife.tlb_st_name(f, i));
        return out;
    }

    /** One tensor into the current target. */
    public Tensor get(String name) { return ctx.made(tensorlife.tlb_st_get(ctx.c, f, Context.name("tensor name", name))); }

    @Override
    public void close() {
        tensorlife.tlb_st_close(f);
        f = 0;
    }
}
