package org.tensorlife;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import org.tensorlife.raw.tensorlife;

/** A slab whose tensors all die at reset().  Use try-with-resources: close() pops it.  A Scope
 *  that is dropped while open is closed by a Cleaner if it is then the innermost (else it closes
 *  with its context). */
public final class Scope implements AutoCloseable {
    final Context ctx;
    final long token;
    private final Cleaner.Cleanable cleanable; // null for a view from Context.currentScope()

    Scope(Context ctx, String name, Growth growth, long slabBytes, long maxBytes) {
        this.ctx = ctx;
        long c = ctx.c;
        long t = tensorlife.tlb_scope_open(c, Context.name("scope name", name), growth.code, slabBytes, maxBytes);
        if (t == 0) throw ctx.failure();
        token = t;
        tensorlife.tlb_scope_hold(c);
        // Locals only: a lambda reading a field would capture this Scope and keep it reachable.
        cleanable = Context.CLEANER.register(this, () -> tensorlife.tlb_scope_release(c, t));
    }

    Scope(Context ctx, long token) {
        this.ctx = ctx;
        this.token = token;
        cleanable = null;
    }

    /** Every tensor placed here dies; the slab is kept for the next step. */
    public void reset() {
        ctx.check(tensorlife.tlb_scope_reset(ctx.c, token));
        Reference.reachabilityFence(this);
    }

    /** Resets, frees the slab, pops the scope.  A second close throws InvalidHandleException. */
    @Override
    public void close() {
        ctx.check(tensorlife.tlb_scope_close(ctx.c, token));
        Reference.reachabilityFence(this);
    }

    /** The name it was opened with. */
    public String name() {
        String n = tensorlife.tlb_scope_name(ctx.c, token);
        if (n == null) throw ctx.failure();
        return n;
    }

    /** The scope's memory figures now. */
    public ScopeStats stats() {
        long[] v = new long[ScopeStats.SLOTS];
        ctx.check(tensorlife.tlb_scope_stats(ctx.c, token, v));
        return ScopeStats.of(v);
    }

    /** The same figures and the name, as JSON. */
    public String statsJson() {
        String s = tensorlife.tlb_scope_stats_json(ctx.c, token);
        if (s == null) throw ctx.failure();
        return s;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Scope && ((Scope) o).ctx == ctx && ((Scope) o).token == token;
    }

    @Override
    public int hashCode() { return Long.hashCode(token); }
}
