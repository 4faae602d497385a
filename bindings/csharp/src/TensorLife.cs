// The C# API of tensorlife: Context and Scope are IDisposable (use `using`), failures throw
// one exception class per status (Lists.g.cs) carrying the library's message.  A Context may be
// shared by threads (its calls are serialised); a Context, Scope or file dropped without Dispose
// is released by its SafeHandle, and a Context tells the collector how much native memory it
// holds (GC.AddMemoryPressure).
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using R = TensorLife.Raw.tensorlife;

// The test suite reaches the handles behind the objects (its benchmark baseline, test/Bench.cs).
[assembly: System.Runtime.CompilerServices.InternalsVisibleTo("Test")]

namespace TensorLife {

/// The native context record; released once by the runtime (finalizer or Dispose).
sealed class ContextHandle : SafeHandle {
    internal ContextHandle(ulong c) : base(IntPtr.Zero, true) { SetHandle((IntPtr)(long)c); }
    public override bool IsInvalid => handle == IntPtr.Zero;
    internal ulong C => (ulong)(long)handle;
    protected override bool ReleaseHandle() { R.tlb_context_release(C); return true; }
}

/// An open scope's token and the reference on the context record it took (tlb_scope_hold):
/// released once, by Dispose or when collected (then the scope is closed if it is still open
/// and innermost, and the record can go once the Context has).
sealed class ScopeHandle : SafeHandle {
    readonly ulong c;
    internal ScopeHandle(ulong c, ulong token) : base(IntPtr.Zero, true) { this.c = c; SetHandle((IntPtr)(long)token); }
    public override bool IsInvalid => handle == IntPtr.Zero;
    protected override bool ReleaseHandle() { R.tlb_scope_release(c, (ulong)(long)handle); return true; }
}

/// An open safetensors or GGUF file's index; closed once, by Dispose or when collected (it keeps
/// its own allocator copy, so it needs no context).
sealed class FileHandle : SafeHandle {
    readonly bool gguf;
    internal FileHandle(ulong f, bool gguf) : base(IntPtr.Zero, true) { this.gguf = gguf; SetHandle((IntPtr)(long)f); }
    public override bool IsInvalid => handle == IntPtr.Zero;
    internal ulong F => IsClosed ? 0 : (ulong)(long)handle;
    protected override bool ReleaseHandle() {
        if (gguf) R.tlb_gguf_close((ulong)(long)handle); else R.tlb_st_close((ulong)(long)handle);
        return true;
    }
}

/// Under Mono (Linux and Windows), the small elementwise ops as raw internal calls, registered by
/// the native library (tl.i): no P/Invoke wrapper, no GC transition.  Each is bounded and never
/// waits (tlb.h, tlb_small_add): a result past 16384 elements, a failure or a context busy on
/// another thread makes nothing there, and the op makes the ordinary P/Invoke call, which says
/// why.  Under any other runtime, P/Invoke alone.
static partial class InternalCalls {
    // Mono resolves an internal call when it compiles a method that names it, and an
    // unregistered one for good.  The ops that name them (Elementwise.g.cs) are Context's
    // instance methods, compiled once a Context exists, so after Context's static constructor,
    // which registers them; Mono inlines no method that makes an internal call, so no caller
    // compiled earlier takes one in.  .NET binds them at the first call, which never comes.
    internal static bool InUse;  // registered: under Mono (the benchmark clears it to time P/Invoke)
    // The crossing alone, for the benchmark's floor: the ABI version through an internal call.
    [MethodImpl(MethodImplOptions.InternalCall)] internal static extern int AbiVersion();
}

/// Owns every scope and tensor made through it.
public sealed partial class Context : IDisposable {
    static Context() {
        try {
            InternalCalls.InUse = R.tlb_cs_register_internal_calls() != 0;
        } catch (TypeInitializationException) {  // no native library: the first call says so, as it did
        } catch (DllNotFoundException) {
        }
    }
    /// True under Mono (one whose embedding API has raw internal calls, as Debian 12's does), where
    /// Add, Sub, Mul and Div on small tensors skip P/Invoke through them (about half the cost of a
    /// 16-float add under Mono: bench/README.md); false under .NET, whose P/Invoke is already cheap.
    public static bool MonoInternalCalls => InternalCalls.InUse;

    readonly ContextHandle h;
    internal readonly ulong c;
    readonly List<GCHandle> pinned = new List<GCHandle>();  // arrays wrapped by tensors
    long pressure;

    public Context() {
        ulong record = R.tlb_context_new();
        if (record == 0) throw TensorLifeException.Of(R.tlb_status(0), R.tlb_message(0));
        h = new ContextHandle(record);
        c = record;
    }

    public static string Version => R.tlb_version();
    public static int AbiVersion => R.tlb_abi_version();
    /// OpenBLAS's thread count, which MatMul uses (process-wide).
    public static int BlasThreads {
        get => R.tlb_blas_threads();
        set { if (R.tlb_set_blas_threads(value) != 0) throw TensorLifeException.Of(R.tlb_status(0), R.tlb_message(0)); }
    }

    /// Frees every scope and tensor now; later calls throw InvalidHandleException.  The small
    /// record those calls read stays until the Context is collected (its SafeHandle): released
    /// here, a call after Dispose, or a second Dispose, would read freed memory.
    public void Dispose() {
        lock (pinned) {
            R.tlb_context_close(c);
            foreach (var p in pinned) p.Free();
            pinned.Clear();
            if (pressure > 0) { GC.RemoveMemoryPressure(pressure); pressure = 0; }
        }
        GC.SuppressFinalize(this);
    }

    ~Context() {
        foreach (var p in pinned) if (p.IsAllocated) p.Free();
        if (pressure > 0) GC.RemoveMemoryPressure(pressure);
    }

    internal TensorLifeException Failure() => TensorLifeException.Of(R.tlb_status(c), R.tlb_message(c));
    internal void Check(int status) { if (status != 0) throw Failure(); GC.KeepAlive(h); }
    // Small enough for Mono's JIT to inline (the throw is out of line).  No KeepAlive(h): the new
    // Tensor holds `this`, so h stays reachable until the native call has returned.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal Tensor Made(ulong bits) => bits != 0 ? new Tensor(this, bits) : Fail();
    [MethodImpl(MethodImplOptions.NoInlining)] Tensor Fail() => throw Failure();
    internal void AddPressure(long bytes) {
        if (bytes <= 0) return;
        lock (pinned) pressure += bytes;
        GC.AddMemoryPressure(bytes);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]  // as Made: the throw out of line
    ulong B(Tensor t) => t.ctx == this ? t.bits : Foreign(t);
    [MethodImpl(MethodImplOptions.NoInlining)]
    static ulong Foreign(Tensor t) =>
        throw (t.ctx == null ? Tensor.Empty() : new InvalidHandleException("the tensor belongs to another Context"));
    ulong B(Tensor? t) => t.HasValue ? B(t.Value) : 0;  // an optional operand: null for none

    internal static string Name(string what, string s) {
        if (s == null) throw new InvalidArgumentException(what + " is null");
        if (s.IndexOf('\0') >= 0) throw new InvalidArgumentException(what + " contains a NUL character");
        return s;
    }

    // ---- scopes ----------------------------------------------------------------------------------
    /// Pushes a growing scope with an initial slab of slabBytes (64-bit: 4 GiB and more are fine).
    public Scope OpenScope(string name, long slabBytes = 0) => new Scope(this, name, Growth.Grow, slabBytes, 0);
    /// Every option of tl_scope_open_ex: Fixed refuses past the slab (ScopeFullException).
    public Scope OpenScope(string name, Growth growth, long slabBytes, long maxBytes) => new Scope(this, name, growth, slabBytes, maxBytes);
    /// The innermost open scope (a view: disposing it closes the scope), or null when ambient.
    public Scope CurrentScope() {
        long token = R.tlb_scope_current(c);
        if (token < 0) throw Failure();
        return token == 0 ? null : new Scope(this, (ulong)token);
    }

    // ---- tensors ---------------------------------------------------------------------------------
    public Tensor FromFloats(long[] shape, float[] data) => Made(R.tlb_from_f32(c, shape, (uint)shape.Length, data, (uint)data.Length));
    public Tensor FromDoubles(long[] shape, double[] data) => Made(R.tlb_from_f64(c, shape, (uint)shape.Length, data, (uint)data.Length));
    public Tensor FromInts(long[] shape, int[] data) => Made(R.tlb_from_i32(c, shape, (uint)shape.Length, data, (uint)data.Length));
    public Tensor Zeros(DType dt, params long[] shape) => Made(R.tlb_fill(c, (int)dt, shape, (uint)shape.Length, 0, 0));
    public Tensor Ones(DType dt, params long[] shape) => Made(R.tlb_fill(c, (int)dt, shape, (uint)shape.Length, 1, 0));
    public Tensor Full(DType dt, double value, params long[] shape) => Made(R.tlb_fill(c, (int)dt, shape, (uint)shape.Length, 2, value));

    /// A tensor over a managed array with no copy: the array is pinned as long as the context.
    public Tensor Wrap(long[] shape, float[] data) => Wrap(DType.F32, shape, data, data.Length * 4L);
    public Tensor Wrap(long[] shape, double[] data) => Wrap(DType.F64, shape, data, data.Length * 8L);
    public Tensor Wrap(long[] shape, int[] data) => Wrap(DType.I32, shape, data, data.Length * 4L);
    Tensor Wrap(DType dt, long[] shape, Array data, long bytes) {
        var pin = GCHandle.Alloc(data, GCHandleType.Pinned);
        ulong bits = R.tlb_wrap(c, (int)dt, shape, (uint)shape.Length, pin.AddrOfPinnedObject(), bytes);
        if (bits == 0) { pin.Free(); throw Failure(); }
        lock (pinned) pinned.Add(pin);
        return new Tensor(this, bits);
    }

    // ---- ops: one native call each -----------------------------------------------------------------
    public Tensor MatMul(Tensor a, Tensor b) => Made(R.tlb_matmul(c, B(a), B(b)));
    // Add, Sub, Mul, Div (elementwise, with NumPy broadcasting): Elementwise.g.cs, written by
    // bindings/gen_lists.py from TL_BINARY_OPS.
    /// Rows of table by int ids: an embedding lookup.
    public Tensor GatherRows(Tensor table, Tensor ids) => Made(R.tlb_gather_rows(c, B(table), B(ids)));
    public Tensor Relu(Tensor a) => Made(R.tlb_relu(c, B(a)));
    public Tensor Gelu(Tensor a) => Made(R.tlb_gelu(c, B(a)));
    public Tensor Silu(Tensor a) => Made(R.tlb_silu(c, B(a)));
    public Tensor Exp(Tensor a) => Made(R.tlb_exp(c, B(a)));
    public Tensor Tanh(Tensor a) => Made(R.tlb_tanh(c, B(a)));
    public Tensor Contiguous(Tensor a) => Made(R.tlb_contiguous(c, B(a)));
    /// A new tensor of dtype to: F32 to and from F16, BF16, Q8_0 and Q4_0 (weights as stored).
    public Tensor Convert(Tensor a, DType to) => Made(R.tlb_convert(c, B(a), (int)to));
    /// Over the last axis; w (and LayerNorm's b) may be null for none.
    public Tensor RmsNorm(Tensor x, Tensor? w, double eps) => Made(R.tlb_rmsnorm(c, B(x), B(w), eps));
    public Tensor LayerNorm(Tensor x, Tensor? w, Tensor? b, double eps) => Made(R.tlb_layernorm(c, B(x), B(w), B(b), eps));
    public Tensor Sum(Tensor a, int axis, bool keepdim = false) => Made(R.tlb_sum(c, B(a), axis, keepdim ? 1 : 0));
    public Tensor Mean(Tensor a, int axis, bool keepdim = false) => Made(R.tlb_mean(c, B(a), axis, keepdim ? 1 : 0));
    /// int indices, the axis removed.
    public Tensor ArgMax(Tensor a, int axis) => Made(R.tlb_argmax(c, B(a), axis));
    /// A view: it dies with its base.
    public Tensor Slice(Tensor a, int axis, long start, long length) => Made(R.tlb_slice(c, B(a), axis, start, length));
    public Tensor Transpose(Tensor a, int d0, int d1) => Made(R.tlb_transpose(c, B(a), d0, d1));
    /// A view where the strides allow it, else a copy; one dim may be -1.
    public Tensor Reshape(Tensor a, params long[] shape) => Made(R.tlb_reshape(c, B(a), shape, (uint)shape.Length));
    public Tensor Concat(int axis, params Tensor[] ts) {
        var handles = new ulong[ts.Length];
        for (int i = 0; i < ts.Length; i++) handles[i] = B(ts[i]);
        return Made(R.tlb_concat(c, handles, (uint)handles.Length, axis));
    }
    /// Writes src into dst (a tensor or view, e.g. a KV-cache row), broadcasting src.
    public void CopyInto(Tensor src, Tensor dst) => Check(R.tlb_copy_into(c, B(src), B(dst)));
    public Tensor Softmax(Tensor a, int axis = -1) => Made(R.tlb_softmax(c, B(a), axis));
    public Tensor Scale(Tensor a, double s) => Made(R.tlb_scale(c, B(a), s));
    /// softmax(scale q k^T) v over the first validRows rows of a KV cache, causal by construction:
    /// q [H,Tq,hd], k and v [H,T,hd]; the result is [H,Tq,hd] at every position.
    public Tensor Attention(Tensor q, Tensor k, Tensor v, long validRows, double scale) =>
        Made(R.tlb_attention(c, B(q), B(k), B(v), validRows, scale));
    /// Rotary position embedding of x [..., T, d], row t at position + t, pairs as mode says.
    public Tensor Rope(Tensor x, long position, double theta, RopeMode mode = RopeMode.Halves) =>
        Made(R.tlb_rope(c, B(x), position, theta, (int)mode));

    // ---- io ---------------------------------------------------------------------------------------
    public SafetensorsFile OpenSafetensors(string path) => new SafetensorsFile(this, path, false);
    /// A GGUF file, mapped read-only: its tensors over the mapping in their stored dtype, its metadata by key.
    public GgufFile OpenGguf(string path) => new GgufFile(this, path);
    /// The file mapped read-only: aligned F32/F64/I32 tensors come out over the mapping, no copy;
    /// they are read-only.  The mapping lives until Dispose and the last tensor over it dies.
    public SafetensorsFile MapSafetensors(string path) => new SafetensorsFile(this, path, true);

    /// Every tensor of a safetensors file, into the current target (F16/BF16 arrive as f32).
    public Dictionary<string, Tensor> LoadSafetensors(string path) {
        using (var f = OpenSafetensors(path)) {
            var result = new Dictionary<string, Tensor>();
            foreach (var n in f.Names()) result[n] = f.Get(n);
            return result;
        }
    }

    /// Writes the tensors under their names, atomically.
    public void SaveSafetensors(string path, IDictionary<string, Tensor> tensors) {
        var names = new List<string>(tensors.Keys);
        names.Sort(StringComparer.Ordinal);
        var handles = new ulong[names.Count];
        for (int i = 0; i < handles.Length; i++) {
            if (names[i].IndexOf('\n') >= 0 || names[i].IndexOf('\0') >= 0)
                throw new InvalidArgumentException("a tensor name contains a newline or a NUL character");
            handles[i] = B(tensors[names[i]]);
        }
        Check(R.tlb_safetensors_save(c, Name("path", path), string.Join("\n", names), handles, (uint)handles.Length));
    }

    /// Every open scope and the ambient totals, as JSON.
    public string ReportJson() => R.tlb_context_report_json(c) ?? throw Failure();
    public Tensor TensorFromJson(string json) => Made(R.tlb_tensor_from_json(c, Name("JSON text", json)));
}

/// A slab whose tensors all die at Reset(); Dispose closes it.  A Scope dropped while open is
/// closed by its finalizer if it is then the innermost (else it closes with its context).
public sealed class Scope : IDisposable {
    internal readonly Context ctx;
    internal readonly ulong token;
    readonly ScopeHandle handle;  // null for a view (Context.CurrentScope): it closes nothing
    bool closed;

    internal Scope(Context ctx, string name, Growth growth, long slabBytes, long maxBytes) {
        this.ctx = ctx;
        token = R.tlb_scope_open(ctx.c, Context.Name("scope name", name), (int)growth, slabBytes, maxBytes);
        if (token == 0) throw ctx.Failure();
        R.tlb_scope_hold(ctx.c);
        handle = new ScopeHandle(ctx.c, token);
        ctx.AddPressure(slabBytes);
    }

    internal Scope(Context ctx, ulong token) { this.ctx = ctx; this.token = token; }

    public void Reset() => ctx.Check(R.tlb_scope_reset(ctx.c, token));
    /// Resets, frees the slab, pops the scope; a second Close throws InvalidHandleException.
    public void Close() {
        ctx.Check(R.tlb_scope_close(ctx.c, token));
        closed = true;
        handle?.Dispose();  // the record's reference, now
    }
    /// Close, unless this Scope was closed already (then nothing, as Dispose should).
    public void Dispose() { if (!closed) Close(); }
    public string Name => R.tlb_scope_name(ctx.c, token) ?? throw ctx.Failure();

    /// The scope's memory figures now.
    public ScopeStats Stats() {
        var v = new ulong[ScopeStats.Slots];
        ctx.Check(R.tlb_scope_stats(ctx.c, token, v, (uint)v.Length));
        return new ScopeStats(v);
    }
    public string StatsJson() => R.tlb_scope_stats_json(ctx.c, token) ?? throw ctx.Failure();

    public override bool Equals(object o) => o is Scope s && s.ctx == ctx && s.token == token;
    public override int GetHashCode() => token.GetHashCode();
}

/// An open safetensors file: its header checked at open, a tensor's data read at Get.
public sealed class SafetensorsFile : IDisposable {
    readonly Context ctx;
    readonly FileHandle h;
    ulong f => h.F;  // 0 once closed: the runtime refuses it

    internal SafetensorsFile(Context ctx, string path, bool mapped) {
        this.ctx = ctx;
        var p = Context.Name("path", path);
        ulong opened = mapped ? R.tlb_st_map(ctx.c, p) : R.tlb_st_open(ctx.c, p);
        if (opened == 0) throw ctx.Failure();
        h = new FileHandle(opened, false);
    }

    /// Whether Get(name) gives a read-only tensor over the mapping (else a copy).
    public bool Maps(string name) => name.IndexOf('\0') < 0 && R.tlb_st_maps(f, name) == 1;

    public List<string> Names() {
        var names = new List<string>();
        for (long i = 0, n = R.tlb_st_count(f); i < n; i++) names.Add(R.tlb_st_name(f, i));
        return names;
    }

    public Tensor Get(string name) => ctx.Made(R.tlb_st_get(ctx.c, f, Context.Name("tensor name", name)));
    public void Dispose() => h.Dispose();
}

/// An open GGUF file (versions 2 and 3, as llama.cpp writes them), mapped read-only: Get gives a
/// read-only tensor over the mapping in its stored dtype (Q8_0, Q4_0, F16, ...); the metadata is
/// read by type (item &lt; 0 for a scalar key, else that item of an array).
public sealed class GgufFile : IDisposable {
    readonly Context ctx;
    readonly FileHandle h;

    /// A key's type, and for an array its items' type and length (a scalar: its own type, 1).
    public struct KeyInfo {
        public GgufType Type { get; }
        public GgufType ItemType { get; }
        public long Count { get; }
        internal KeyInfo(long[] v) { Type = (GgufType)v[0]; ItemType = (GgufType)v[1]; Count = v[2]; }
    }

    internal GgufFile(Context ctx, string path) {
        this.ctx = ctx;
        ulong opened = R.tlb_gguf_open(ctx.c, Context.Name("path", path));
        if (opened == 0) throw ctx.Failure();
        h = new FileHandle(opened, true);
    }

    ulong Open() {
        if (h.IsClosed) throw TensorLifeException.Of(-2, "the GGUF file is closed");
        return h.F;
    }

    public List<string> Names() {
        var h = Open();
        var names = new List<string>();
        for (long i = 0, n = R.tlb_gguf_tensor_count(h); i < n; i++) names.Add(R.tlb_gguf_tensor_name(h, i));
        return names;
    }

    public List<string> Keys() {
        var h = Open();
        var keys = new List<string>();
        for (long i = 0, n = R.tlb_gguf_key_count(h); i < n; i++) keys.Add(R.tlb_gguf_key_name(h, i));
        return keys;
    }

    /// One tensor over the mapping (NotFoundException for a name the file does not hold).
    public Tensor Get(string name) => ctx.Made(R.tlb_gguf_get(ctx.c, Open(), Context.Name("tensor name", name)));

    public KeyInfo KeyType(string key) {
        var v = new long[3];
        ctx.Check(R.tlb_gguf_key_type(ctx.c, Open(), Context.Name("key", key), v, (uint)v.Length));
        return new KeyInfo(v);
    }

    /// An integer or bool key, or item `item` (&gt;= 0) of an array of numbers.
    public long GetInt(string key, long item = -1) {
        var v = new long[1];
        ctx.Check(R.tlb_gguf_int(ctx.c, Open(), Context.Name("key", key), item, v, 1));
        return v[0];
    }

    /// Any number key as a double, or item `item` (&gt;= 0) of an array of numbers.
    public double GetFloat(string key, long item = -1) {
        var v = new double[1];
        ctx.Check(R.tlb_gguf_float(ctx.c, Open(), Context.Name("key", key), item, v, 1));
        return v[0];
    }

    /// A string key, or item `item` (&gt;= 0) of an array of strings.
    public string GetString(string key, long item = -1) {
        var s = R.tlb_gguf_string(ctx.c, Open(), Context.Name("key", key), item);
        if (s == null) throw ctx.Failure();
        return s;
    }

    public void Dispose() => h.Dispose();
}

/// A value handle (its Context and the library's handle bits): valid until its scope's reset
/// (then StorageClosedException) or Free().  A struct, so an op allocates nothing on the managed
/// heap (a 16-float add through .NET: 1.32x the C add as a class, 1.20x as a struct:
/// bench/README.md).  Equal when they name the same tensor; default(Tensor) names none, and every
/// use of it throws InvalidHandleException.
public struct Tensor : IEquatable<Tensor> {
    internal readonly Context ctx;  // null in default(Tensor)
    internal readonly ulong bits;
    internal Tensor(Context ctx, ulong bits) { this.ctx = ctx; this.bits = bits; }
    Context Ctx => ctx ?? throw Empty();  // what the tensor's own methods use
    internal static InvalidHandleException Empty() => new InvalidHandleException("default(Tensor) names no tensor");

    public bool Equals(Tensor other) => ctx == other.ctx && bits == other.bits;
    public override bool Equals(object obj) => obj is Tensor t && Equals(t);
    public override int GetHashCode() => bits.GetHashCode();
    public static bool operator ==(Tensor a, Tensor b) => a.Equals(b);
    public static bool operator !=(Tensor a, Tensor b) => !a.Equals(b);

    /// The whole tl_tensor_info.
    public sealed class TensorInfo {
        public DType DType; public long[] Shape, Strides; public long Offset, Generation, Count; public string Storage;
        public bool ReadOnly;  // over a read-only mapping: never write through its memory
    }

    public TensorInfo Info() {
        var v = new long[InfoSlots.Slots];
        Ctx.Check(R.tlb_info(Ctx.c, bits, v, (uint)v.Length));
        int n = (int)v[InfoSlots.Ndim];
        var shape = new long[n];
        var strides = new long[n];
        Array.Copy(v, InfoSlots.Shape, shape, 0, n);
        Array.Copy(v, InfoSlots.Strides, strides, 0, n);
        return new TensorInfo { DType = (DType)v[InfoSlots.Dtype], Shape = shape, Strides = strides,
                                Offset = v[InfoSlots.Offset], Generation = v[InfoSlots.Generation],
                                Count = v[InfoSlots.Count], Storage = R.tlb_storage(Ctx.c, bits),
                                ReadOnly = v[InfoSlots.ReadOnly] != 0 };
    }

    public long[] Shape => Info().Shape;
    int Count => checked((int)Info().Count);

    /// The elements in logical order; the tensor must be F32 (bits are never reinterpreted).
    public float[] ToFloats() { var v = new float[Count]; Ctx.Check(R.tlb_read_f32(Ctx.c, bits, v, (uint)v.Length)); return v; }
    public double[] ToDoubles() { var v = new double[Count]; Ctx.Check(R.tlb_read_f64(Ctx.c, bits, v, (uint)v.Length)); return v; }
    public int[] ToInts() { var v = new int[Count]; Ctx.Check(R.tlb_read_i32(Ctx.c, bits, v, (uint)v.Length)); return v; }
    public void Read(float[] dst) => Ctx.Check(R.tlb_read_f32(Ctx.c, bits, dst, (uint)dst.Length));
    public void Free() => Ctx.Check(R.tlb_free(Ctx.c, bits));
    public string ToJson() => R.tlb_tensor_to_json(Ctx.c, bits) ?? throw Ctx.Failure();

    /// Copies into target (an open scope), or into ambient memory when target is null.
    public Tensor Retain(Scope target = null) {
        if (target != null && target.ctx != Ctx) throw new InvalidHandleException("the scope belongs to another Context");
        return Ctx.Made(R.tlb_retain(Ctx.c, bits, target == null ? 0 : target.token));
    }
}

}  // namespace TensorLife
