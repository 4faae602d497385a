// The C# API of tensorlife: Context and Scope are IDisposable (use `using`), failures throw
// TensorLifeException subclasses carrying the library's status and message.
using System;
using TensorLife.Raw;
using R = TensorLife.Raw.tensorlife;

namespace TensorLife {

public class TensorLifeException : Exception {
    public int Status { get; }
    internal TensorLifeException(int status, string message)
        : base(R.tlb_status_string(status) + ": " + message) { Status = status; }

    internal static TensorLifeException Of(int status, string message) {
        if (status == R.E_STORAGE_CLOSED) return new StorageClosedException(status, message);
        if (status == R.E_INVALID_HANDLE) return new InvalidHandleException(status, message);
        if (status == R.E_INVALID_ARGUMENT) return new InvalidArgumentException(status, message);
        if (status == R.E_SHAPE) return new ShapeException(status, message);
        if (status == R.E_DTYPE) return new DtypeException(status, message);
        return new TensorLifeException(status, message);
    }

    // The message is thread-local in the library: read it right after the failing call.
    internal static void Check(int status) {
        if (status != R.OK) throw Of(status, R.tlb_last_error());
    }
}

/// A tensor used after its scope was reset or closed; the message names the storage.
public class StorageClosedException : TensorLifeException {
    internal StorageClosedException(int s, string m) : base(s, m) {}
}
/// A handle never issued, freed, of another context, or of a disposed Context/Scope.
public class InvalidHandleException : TensorLifeException {
    internal InvalidHandleException(int s, string m) : base(s, m) {}
}
public class InvalidArgumentException : TensorLifeException {
    internal InvalidArgumentException(int s, string m) : base(s, m) {}
}
public class ShapeException : TensorLifeException {
    internal ShapeException(int s, string m) : base(s, m) {}
}
public class DtypeException : TensorLifeException {
    internal DtypeException(int s, string m) : base(s, m) {}
}

/// Owns every scope and tensor made through it; one thread at a time.
public sealed class Context : IDisposable {
    SWIGTYPE_p_tl_context ctx;

    public Context() {
        ctx = R.tlb_context_new();
        if (ctx == null || SWIGTYPE_p_tl_context.getCPtr(ctx).Handle == IntPtr.Zero) TensorLifeException.Check(R.tlb_last_status());
    }

    public static string Version => R.tlb_version();

    internal SWIGTYPE_p_tl_context Raw {
        get {
            if (ctx == null) throw new InvalidHandleException(R.E_INVALID_HANDLE, "the context is disposed");
            return ctx;
        }
    }
    internal bool IsOpen => ctx != null;

    /// Frees every scope and tensor; disposing twice does nothing.
    public void Dispose() {
        if (ctx != null) {
            R.tlb_context_free(ctx);
            ctx = null;
        }
    }

    public Scope OpenScope(string name, long slabBytes) => new Scope(this, name, slabBytes);

    Tensor Made(ulong[] o) => new Tensor(this, o[0]);

    /// One C call writing one handle: checked, then wrapped.
    delegate int Call(ulong[] o);
    Tensor Make(Call call) {
        var o = new ulong[1];
        TensorLifeException.Check(call(o));
        return Made(o);
    }

    public Tensor FromFloats(long[] shape, float[] data) =>
        Make(o => R.tlb_from_f32(Raw, shape, (uint)shape.Length, data, (uint)data.Length, o));
    public Tensor FromDoubles(long[] shape, double[] data) =>
        Make(o => R.tlb_from_f64(Raw, shape, (uint)shape.Length, data, (uint)data.Length, o));
    public Tensor FromInts(long[] shape, int[] data) =>
        Make(o => R.tlb_from_i32(Raw, shape, (uint)shape.Length, data, (uint)data.Length, o));
    public Tensor MatMul(Tensor a, Tensor b) =>
        Make(o => R.tlb_matmul(Raw, a.Bits, b.Bits, o));
    public Tensor Add(Tensor a, Tensor b) =>
        Make(o => R.tlb_add(Raw, a.Bits, b.Bits, o));
    public Tensor Mul(Tensor a, Tensor b) =>
        Make(o => R.tlb_mul(Raw, a.Bits, b.Bits, o));
    delegate int UnaryCall(SWIGTYPE_p_tl_context c, ulong a, ulong[] o);
    Tensor Unary(UnaryCall f, Tensor a) => Make(o => f(Raw, a.Bits, o));
    public Tensor Relu(Tensor a) => Unary(R.tlb_relu, a);
    public Tensor Gelu(Tensor a) => Unary(R.tlb_gelu, a);
    public Tensor Silu(Tensor a) => Unary(R.tlb_silu, a);
    public Tensor Exp(Tensor a) => Unary(R.tlb_exp, a);
    public Tensor Tanh(Tensor a) => Unary(R.tlb_tanh, a);
    public Tensor Contiguous(Tensor a) => Unary(R.tlb_contiguous, a);
    public Tensor Sub(Tensor a, Tensor b) =>
        Make(o => R.tlb_sub(Raw, a.Bits, b.Bits, o));
    public Tensor Div(Tensor a, Tensor b) =>
        Make(o => R.tlb_div(Raw, a.Bits, b.Bits, o));
    /// Over the last axis; w may be null for none.
    public Tensor RmsNorm(Tensor x, Tensor? w, double eps) =>
        Make(o => R.tlb_rmsnorm(Raw, x.Bits, w?.Bits ?? 0, eps, o));
    /// Over the last axis; w and b may be null for none.
    public Tensor LayerNorm(Tensor x, Tensor? w, Tensor? b, double eps) =>
        Make(o => R.tlb_layernorm(Raw, x.Bits, w?.Bits ?? 0, b?.Bits ?? 0, eps, o));
    Tensor Reduce(Tensor a, int kind, int axis, bool keepdim) =>
        Make(o => R.tlb_reduce(Raw, a.Bits, kind, axis, keepdim ? 1 : 0, o));
    public Tensor Sum(Tensor a, int axis, bool keepdim = false) => Reduce(a, 0, axis, keepdim);
    public Tensor Mean(Tensor a, int axis, bool keepdim = false) => Reduce(a, 1, axis, keepdim);
    /// int indices, the axis removed.
    public Tensor ArgMax(Tensor a, int axis) => Reduce(a, 2, axis, false);
    /// A view: it dies with its base.
    public Tensor Slice(Tensor a, int axis, long start, long length) =>
        Make(o => R.tlb_slice(Raw, a.Bits, axis, start, length, o));
    public Tensor Transpose(Tensor a, int d0, int d1) =>
        Make(o => R.tlb_transpose(Raw, a.Bits, d0, d1, o));
    /// A view where the strides allow it, else a copy; one dim may be -1.
    public Tensor Reshape(Tensor a, params long[] shape) =>
        Make(o => R.tlb_reshape(Raw, a.Bits, shape, (uint)shape.Length, o));
    public Tensor Concat(int axis, params Tensor[] ts) {
        var bits = new ulong[ts.Length];
        for (int i = 0; i < ts.Length; i++) bits[i] = ts[i].Bits;
        return Make(o => R.tlb_concat(Raw, bits, (uint)bits.Length, axis, o));
    }
    /// Rows of table by int ids: an embedding lookup.
    public Tensor GatherRows(Tensor table, Tensor ids) =>
        Make(o => R.tlb_gather_rows(Raw, table.Bits, ids.Bits, o));
    /// Writes src into dst (a tensor or view, e.g. a KV-cache row), broadcasting src.
    public void CopyInto(Tensor src, Tensor dst) => TensorLifeException.Check(R.tlb_copy_into(Raw, src.Bits, dst.Bits));

    public Tensor Softmax(Tensor a, int axis) =>
        Make(o => R.tlb_softmax(Raw, a.Bits, axis, o));
    public Tensor Scale(Tensor a, double s) =>
        Make(o => R.tlb_scale(Raw, a.Bits, s, o));
    /// Every tensor of a safetensors file, into the current target (F16/BF16 arrive as f32).
    public System.Collections.Generic.Dictionary<string, Tensor> LoadSafetensors(string path) {
        var f = R.tlb_st_open(Raw, path);
        if (SWIGTYPE_p_tl_st_file.getCPtr(f).Handle == IntPtr.Zero) TensorLifeException.Check(R.tlb_last_status());
        try {
            var result = new System.Collections.Generic.Dictionary<string, Tensor>();
            uint n = R.tlb_st_count(f);
            for (uint i = 0; i < n; i++) {
                string name = R.tlb_st_name(f, i);
                result[name] = Make(o => R.tlb_st_get(Raw, f, name, o));
            }
            return result;
        } finally {
            R.tlb_st_close(f);
        }
    }

    /// Writes the tensors under their names (no newline in a name).
    public void SaveSafetensors(string path, System.Collections.Generic.IDictionary<string, Tensor> tensors) {
        var names = new System.Collections.Generic.List<string>(tensors.Keys);
        names.Sort(StringComparer.Ordinal);
        var handles = new ulong[names.Count];
        for (int i = 0; i < handles.Length; i++) {
            if (names[i].Contains("\n")) throw new InvalidArgumentException(R.E_INVALID_ARGUMENT, "a name contains a newline");
            handles[i] = tensors[names[i]].Bits;
        }
        TensorLifeException.Check(R.tlb_safetensors_save(Raw, path, string.Join("\n", names), handles, (uint)handles.Length));
    }

    /// Every open scope and the ambient totals, as JSON.
    public string ReportJson() {
        var s = R.tlb_context_report_json(Raw);
        if (s == null) TensorLifeException.Check(R.tlb_last_status());
        return s;
    }

    /// The reverse of Tensor.ToJson, into the current target.
    public Tensor TensorFromJson(string json) =>
        Make(o => R.tlb_tensor_from_json(Raw, json, o));

    internal string ToJson(Tensor t) {
        var s = R.tlb_tensor_to_json(Raw, t.Bits);
        if (s == null) TensorLifeException.Check(R.tlb_last_status());
        return s;
    }

    internal Tensor Retain(Tensor t, Scope target) =>
        Make(o => R.tlb_retain(Raw, t.Bits, target?.Raw, o));
}

/// A slab whose tensors all die at Reset(); Dispose() pops it.
public sealed class Scope : IDisposable {
    readonly Context ctx;
    SWIGTYPE_p_tl_scope scope;

    internal Scope(Context ctx, string name, long slabBytes) {
        this.ctx = ctx;
        scope = R.tlb_scope_open(ctx.Raw, name, (uint)slabBytes);
        if (SWIGTYPE_p_tl_scope.getCPtr(scope).Handle == IntPtr.Zero) {
            scope = null;
            TensorLifeException.Check(R.tlb_last_status());
        }
    }

    internal SWIGTYPE_p_tl_scope Raw {
        get {
            if (scope == null || !ctx.IsOpen) throw new InvalidHandleException(R.E_INVALID_HANDLE, "the scope is disposed");
            return scope;
        }
    }

    public void Reset() => TensorLifeException.Check(R.tlb_scope_reset(Raw));

    /// Closes the scope; a second Close throws InvalidHandleException, Dispose after Close does nothing.
    public void Close() {
        TensorLifeException.Check(R.tlb_scope_close(Raw));
        scope = null;
    }

    public void Dispose() {
        if (scope != null && ctx.IsOpen) Close();
    }

    /// generation, slab, used, peak, overflow bytes, grow events, live tensors.
    public ulong[] Stats() {
        var v = new ulong[7];
        TensorLifeException.Check(R.tlb_scope_stats(Raw, v, 7));
        return v;
    }
}

/// A value handle; valid until its scope's reset (then StorageClosedException) or Free().
public struct Tensor {
    readonly Context ctx;
    internal readonly ulong Bits;
    internal Tensor(Context ctx, ulong bits) { this.ctx = ctx; Bits = bits; }

    public long[] Shape {
        get {
            var s = new long[9];
            var dt = new ulong[1];
            TensorLifeException.Check(R.tlb_shape(ctx.Raw, Bits, s, 9, dt));
            var r = new long[s[0]];
            Array.Copy(s, 1, r, 0, r.Length);
            return r;
        }
    }
    int Count { get { long n = 1; foreach (var d in Shape) n *= d; return checked((int)n); } }

    public float[] ToFloats() {
        var v = new float[Count];
        TensorLifeException.Check(R.tlb_read_f32(ctx.Raw, Bits, v, (uint)v.Length));
        return v;
    }
    public double[] ToDoubles() {
        var v = new double[Count];
        TensorLifeException.Check(R.tlb_read_f64(ctx.Raw, Bits, v, (uint)v.Length));
        return v;
    }
    public int[] ToInts() {
        var v = new int[Count];
        TensorLifeException.Check(R.tlb_read_i32(ctx.Raw, Bits, v, (uint)v.Length));
        return v;
    }
    /// Copies into dst, which must hold every element.
    public void Read(float[] dst) => TensorLifeException.Check(R.tlb_read_f32(ctx.Raw, Bits, dst, (uint)dst.Length));
    public void Free() => TensorLifeException.Check(R.tlb_free(ctx.Raw, Bits));
    /// {"dtype","shape","data"}: floats exact, non-finite values as "nan", "inf", "-inf".
    public string ToJson() => ctx.ToJson(this);
    /// Copies into target (an open scope), or into ambient memory when target is null.
    public Tensor Retain(Scope target) => ctx.Retain(this, target);

    /// The bindings benchmark's baseline: n tiny adds made from C in one call.
    public static void AddLoopFromC(Context ctx, Scope s, Tensor a, Tensor b, long n) =>
        TensorLifeException.Check(R.tlb_bench_add_loop(ctx.Raw, s.Raw, a.Bits, b.Bits, n));
}
}
