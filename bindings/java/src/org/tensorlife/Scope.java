package org.tensorlife;

import org.tensorlife.raw.SWIGTYPE_p_tl_scope;
import org.tensorlife.raw.tensorlife;

/** A slab whose tensors all die at reset().  Use try-with-resources: close() pops it. */
public final class Scope implements AutoCloseable {
    private final Context ctx;
    private SWIGTYPE_p_tl_scope scope;

    Scope(Context ctx, String name, long slabBytes) {
        this.ctx = ctx;
        scope = tensorlife.tlb_scope_open(ctx.raw(), name, slabBytes);
        if (scope == null) TensorLifeException.check(tensorlife.tlb_last_status());
    }

    SWIGTYPE_p_tl_scope raw() {
        if (scope == null || !ctx.isOpen())
            throw new TensorLifeException.InvalidHandleException(tensorlife.E_INVALID_HANDLE, "the scope is closed");
        return scope;
    }

    /** Every tensor placed here dies; the slab is kept for the next step. */
    public void reset() { TensorLifeException.check(tensorlife.tlb_scope_reset(raw())); }

    /** Resets, frees the slab, pops the scope.  A second close throws InvalidHandleException. */
    @Override
    public void close() {
        TensorLifeException.check(tensorlife.tlb_scope_close(raw()));
        scope = null;
    }

    /** generation, slabBytes, usedBytes, peakBytes, overflowBytes, growEvents, liveTensors. */
    public long[] stats() {
        long[] v = new long[7];
        TensorLifeException.check(tensorlife.tlb_scope_stats(raw(), v));
        return v;
    }
}
