// The bindings' shared scenario in C#; prints "N passed, N failed".  With --bench, the
// tiny-op benchmark instead.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using TensorLife;

static class Test {
    static int passed, failed;

    static void Run(string name, Action body) {
        try { body(); passed++; Console.WriteLine("PASS " + name); }
        catch (Exception e) { failed++; Console.WriteLine("FAIL " + name + ": " + e); }
    }

    static void Check(bool ok, string what) { if (!ok) throw new Exception(what); }

    static void Throws<T>(Action a, string what, string says = "") where T : Exception {
        try { a(); } catch (T e) {
            if (e.Message.Contains(says)) return;
            throw new Exception(what + ": " + typeof(T).Name + " says \"" + e.Message + "\", not \"" + says + "\"");
        }
        throw new Exception(what + ": no " + typeof(T).Name);
    }

    const int D = 8;

    // tests/golden/metadata.gguf (make_golden.py, copied beside the run by test.sh).
    internal static void Gguf() {
        using (var ctx = new Context())
        using (var f = ctx.OpenGguf("metadata.gguf")) {
            Check(string.Join(",", f.Names()) == "w.q8_0,x.f32", "names");
            Check(f.Keys().Contains("fixture.ids"), "keys");
            Check(f.GetString("general.architecture") == "tensorlife-fixture", "architecture");
            Check(f.GetInt("fixture.u32") == 4000000000L && f.GetInt("fixture.i8") == -5 && f.GetInt("fixture.bool") == 1, "ints");
            Check(f.GetFloat("fixture.f64") == -2.25 && f.GetFloat("fixture.scores", 1) == -1.5 && f.GetInt("fixture.ids", 2) == 9, "numbers");
            Check(f.GetString("fixture.strings", 1) == "\u03b2eta" && f.GetString("fixture.strings", 2) == "", "strings");
            var kt = f.KeyType("fixture.ids");
            Check(kt.Type == GgufType.Array && kt.ItemType == GgufType.Int32 && kt.Count == 3, "key type");
            Throws<InvalidArgumentException>(() => f.GetInt("fixture.u64"), "uint64 past INT64_MAX");
            Throws<ShapeException>(() => f.GetInt("fixture.ids", 3), "past the end");
            Throws<NotFoundException>(() => f.GetInt("no.such.key"), "missing key");
            Throws<InvalidArgumentException>(() => f.GetInt("fixture\0u8"), "NUL in a key");
            var w = f.Get("w.q8_0").Info();
            Check(w.DType == DType.Q8_0 && w.Shape[1] == 64 && w.ReadOnly, "q8_0 tensor");
            Check(f.Get("x.f32").ToFloats()[5] == 5f, "f32 tensor");
            f.Dispose();
            Throws<InvalidHandleException>(() => f.GetInt("fixture.u8"), "closed file");
            Throws<IoException>(() => ctx.OpenGguf("Test.missing"), "missing file");
        }
    }

    // With `using System;` above, each exception's short name must resolve to one type (TL_E_OUT_OF_MEMORY
    // is TensorLifeOutOfMemoryException: System has an OutOfMemoryException).
    internal static void ExceptionNames() {
        using (var ctx = new Context()) {
            Throws<TensorLifeOutOfMemoryException>(() => ctx.Zeros(DType.F32, 1L << 40, 1L << 20), "an exabyte");
            try { ctx.Zeros(DType.F32, 1L << 40, 1L << 20); }
            catch (TensorLifeException e) { Check(e.Status == -7 && e.Message.StartsWith("TL_E_OUT_OF_MEMORY"), e.Message); }
            Check(!typeof(System.OutOfMemoryException).IsAssignableFrom(typeof(TensorLifeOutOfMemoryException)), "not System's");
        }
    }

    internal static void LlamaOps() {
        using (var ctx = new Context()) {
            var x = new float[] {1, 2, 3, 4};
            var xt = ctx.FromFloats(new long[] {1, 4}, x);
            var pairs = new[] { new[] { new[] {0, 2}, new[] {1, 3} }, new[] { new[] {0, 1}, new[] {2, 3} } };
            var modes = new[] { RopeMode.Halves, RopeMode.Interleaved };
            for (int m = 0; m < 2; m++) {
                var want = new double[] {1, 2, 3, 4};
                for (int i = 0; i < 2; i++) {
                    double angle = 3 * Math.Pow(10000, -2.0 * i / 4), a = x[pairs[m][i][0]], b = x[pairs[m][i][1]];
                    want[pairs[m][i][0]] = a * Math.Cos(angle) - b * Math.Sin(angle);
                    want[pairs[m][i][1]] = a * Math.Sin(angle) + b * Math.Cos(angle);
                }
                var got = ctx.Rope(xt, 3, 10000, modes[m]).ToFloats();
                for (int i = 0; i < 4; i++) Check(Math.Abs(got[i] - want[i]) < 1e-5, $"{modes[m]} element {i}");
            }
            Throws<InvalidArgumentException>(() => ctx.Rope(xt, 0, 10000, (RopeMode)7), "mode 7");
            var k = ctx.Zeros(DType.F16, 2, 3, 2);
            var v = ctx.Zeros(DType.F16, 2, 3, 2);
            ctx.CopyInto(ctx.FromFloats(new long[] {2, 3, 2}, new float[] {.5f, .5f, .5f, .5f, .5f, .5f, .5f, .5f, .5f, .5f, .5f, .5f}), k);
            ctx.CopyInto(ctx.FromFloats(new long[] {2, 3, 2}, new float[] {1, 2, 1, 2, 1, 2, 5, 6, 5, 6, 5, 6}), v);
            var q = ctx.FromFloats(new long[] {4, 1, 2}, new float[] {1, 1, 1, 1, 1, 1, 1, 1});
            var got2 = ctx.Attention(q, k, v, 3, 0.5).ToFloats();
            Check(string.Join(",", got2) == "1,2,1,2,5,6,5,6", "query heads 0, 1 read kv head 0; 2, 3 kv head 1: " + string.Join(",", got2));
        }
    }

    internal static void DecodeLoop() {
        using (var ctx = new Context()) {
            var w = new float[D * D];
            var b = new float[D];
            for (int i = 0; i < w.Length; i++) w[i] = (i % 7) / 7f - 0.4f;
            for (int i = 0; i < D; i++) b[i] = i / 10f;
            Tensor tw = ctx.FromFloats(new long[] { D, D }, w), tb = ctx.FromFloats(new long[] { D }, b), kept = default(Tensor);
            using (var step = ctx.OpenScope("decode-step", 0)) {
                ScopeStats first = default(ScopeStats);
                for (int s = 0; s < 50; s++) {
                    var x = new float[D];
                    for (int i = 0; i < D; i++) x[i] = ((s + i) % 5) - 2;
                    var p = ctx.Softmax(ctx.Add(ctx.MatMul(ctx.FromFloats(new long[] { 1, D }, x), tw), tb), -1);
                    var got = p.ToFloats();
                    var logits = new double[D];
                    double top = double.NegativeInfinity, total = 0;
                    for (int j = 0; j < D; j++) {
                        for (int k = 0; k < D; k++) logits[j] += (double)x[k] * w[k * D + j];
                        logits[j] += b[j];
                        top = Math.Max(top, logits[j]);
                    }
                    foreach (var l in logits) total += Math.Exp(l - top);
                    for (int j = 0; j < D; j++) Check(Math.Abs(got[j] - Math.Exp(logits[j] - top) / total) < 1e-5, $"step {s} col {j}");
                    kept = p;
                    step.Reset();
                    var st = step.Stats();
                    if (s == 0) first = st;
                    else Check(st.SlabBytes == first.SlabBytes && st.PeakBytes == first.PeakBytes &&
                               st.GrowEvents == first.GrowEvents, "no growth after step 1");
                }
                try { kept.ToFloats(); Check(false, "a tensor kept past its reset was read"); }
                catch (StorageClosedException e) {
                    Check(e.Message.Contains("storage 'decode-step'"), e.Message);
                    Check(e.Message.Contains("gen 49 is closed (scope is at gen 50)"), e.Message);
                }
            }
        }
    }

    internal static void Misuse() {
        var ctx = new Context();
        var s = ctx.OpenScope("frame", 1024);
        var x = ctx.FromFloats(new long[] { 2 }, new float[] { 1, 2 });
        var kept = x.Retain(null);
        s.Close();
        Throws<InvalidHandleException>(() => s.Close(), "closing twice");
        s.Dispose(); // after Close: nothing
        Check(kept.ToFloats()[1] == 2, "retained");
        Throws<StorageClosedException>(() => x.ToFloats(), "use after close");
        Throws<InvalidArgumentException>(() => ctx.FromFloats(new long[] { 2, 3 }, new float[] { 1, 2 }), "wrong size");
        Throws<InvalidArgumentException>(() => kept.Read(new float[1]), "short buffer");
        Throws<ShapeException>(() => ctx.MatMul(kept, kept), "bad matmul");
        var ids = ctx.FromInts(new long[] { 2 }, new int[] { 4, 5 });
        Throws<DtypeException>(() => ctx.Add(ids, kept), "mixed dtypes");
        Check(ids.ToInts()[1] == 5, "ints");
        // Tensor is a struct: default(Tensor) names no tensor; equal handles name the same tensor
        var none = default(Tensor);
        Throws<InvalidHandleException>(() => none.ToFloats(), "default(Tensor) read");
        Throws<InvalidHandleException>(() => ctx.Add(none, kept), "default(Tensor) as an operand");
        Throws<InvalidHandleException>(() => none.Retain(null), "default(Tensor) retained");
        var other = new Context();
        var foreign = other.FromFloats(new long[] { 2 }, new float[] { 1, 2 });
        Throws<InvalidHandleException>(() => ctx.Add(foreign, kept), "a tensor of another Context", "another Context");
        Check(foreign.ToFloats()[1] == 2, "the other Context's tensor");
        other.Dispose();
        var copy = kept;
        Check(copy == kept && copy.Equals((object)kept) && copy.GetHashCode() == kept.GetHashCode(), "equal handles");
        Check(kept != ids && kept != none && !kept.Equals(null), "different handles");
        Check(ctx.RmsNorm(kept, null, 1e-6).ToFloats().Length == 2, "an optional operand left out");
        ctx.Dispose();
        ctx.Dispose();
        Throws<InvalidHandleException>(() => ctx.FromFloats(new long[] { 1 }, new float[] { 1 }), "disposed context");
        Throws<InvalidHandleException>(() => kept.ToFloats(), "tensor of a disposed context");
    }

    internal static void SafetensorsAndJson() {
        using (var ctx = new Context()) {
            var m = new System.Collections.Generic.Dictionary<string, Tensor> {
                ["a"] = ctx.FromFloats(new long[] { 2, 2 }, new float[] { 1, 2, 3, float.PositiveInfinity }),
                ["ids"] = ctx.FromInts(new long[] { 3 }, new int[] { 7, -8, 9 }),
            };
            string dir = System.IO.Path.Combine(System.IO.Path.GetTempPath(), "tl-cs-" + Guid.NewGuid());
            System.IO.Directory.CreateDirectory(dir);
            string path = System.IO.Path.Combine(dir, "w.safetensors");
            ctx.SaveSafetensors(path, m);
            var back = ctx.LoadSafetensors(path);
            Check(float.IsPositiveInfinity(back["a"].ToFloats()[3]), "a");
            Check(back["ids"].ToInts()[1] == -8, "ids");
            try { ctx.LoadSafetensors(System.IO.Path.Combine(dir, "missing")); Check(false, "missing file"); }
            catch (TensorLifeException e) { Check(e.Message.Contains("TL_E_IO"), e.Message); }
            string js = m["a"].ToJson();
            Check(js.Contains("\"inf\""), js);
            Check(ctx.TensorFromJson(js).ToFloats()[2] == 3, "json round trip");
            try { ctx.TensorFromJson("{"); Check(false, "bad json"); }
            catch (TensorLifeException e) { Check(e.Message.Contains("TL_E_PARSE"), e.Message); }
            using (ctx.OpenScope("report-me", 0)) Check(ctx.ReportJson().Contains("\"name\":\"report-me\""), ctx.ReportJson());
            System.IO.Directory.Delete(dir, true);
        }
    }

    internal static void ViewsReductionsAndCaches() {
        using (var ctx = new Context()) {
            var a = ctx.FromFloats(new long[] { 2, 3 }, new float[] { 1, 5, 3, -4, 2, 6 });
            var flat = ctx.Reshape(ctx.Transpose(a, 0, 1), 6).ToFloats();
            Check(flat[1] == -4 && flat[2] == 5, "transpose+reshape");
            var best = ctx.ArgMax(a, -1).ToInts();
            Check(best[0] == 1 && best[1] == 2, "argmax");
            Check(ctx.Sum(a, 0).ToFloats()[2] == 9, "sum");
            var cache = ctx.FromFloats(new long[] { 3, 3 }, new float[9]);
            ctx.CopyInto(ctx.GatherRows(a, ctx.FromInts(new long[] { 1 }, new int[] { 1 })), ctx.Slice(cache, 0, 2, 1));
            var c = cache.ToFloats();
            Check(c[6] == -4 && c[8] == 6 && c[0] == 0, "cache row");
            Check(ctx.Concat(0, a, a).Shape[0] == 4, "concat");
            float r = ctx.RmsNorm(a, null, 1e-6).ToFloats()[0];
            Check(Math.Abs(r - 1 / Math.Sqrt(35.0 / 3 + 1e-6)) < 1e-5, "rmsnorm");
            Throws<ShapeException>(() => ctx.Slice(a, 0, 1, 5), "bad slice");
        }
    }

    static string Spread(List<double> v) {
        v.Sort();
        return $"min {v[0]:F1} / median {v[v.Count / 2]:F1} / max {v[v.Count - 1]:F1}";
    }

    // Interleaved rounds: C# adds, then the same adds from C (the context's thread check on, as a
    // C program has it, and off, as the binding's record runs it), then a trivial call the same
    // way (P/Invoke or internal call), 7 times; min/median/max.  The floor, the least any binding
    // crossing that way can take: the add with the check off plus the trivial call.
    static void Bench() {
        // Under Mono the ops take internal calls; TL_CS_PINVOKE=1 times the P/Invoke path instead
        // (what a Mono without raw internal calls takes).
        bool icalls = Context.MonoInternalCalls && Environment.GetEnvironmentVariable("TL_CS_PINVOKE") != "1";
        InternalCalls.InUse = icalls;
        using (var ctx = new Context()) {
            Tensor a = ctx.FromFloats(new long[] { 16 }, new float[16]), b = ctx.FromFloats(new long[] { 16 }, new float[16]);
            using (var s = ctx.OpenScope("bench", 1 << 16)) {
                const int n = 200000;
                var cs = new List<double>(); var c = new List<double>(); var unchecked_ = new List<double>();
                var floor = new List<double>();
                int sink = 0;
                for (int rep = 0; rep < 7; rep++) {
                    var sw = Stopwatch.StartNew();
                    for (int i = 0; i < n; i++) {
                        ctx.Add(a, b);
                        if ((i & 255) == 255) s.Reset();
                    }
                    cs.Add(sw.Elapsed.TotalMilliseconds * 1e6 / n);
                    c.Add(BenchBaseline.PerAddFromC(ctx, s, a, b, n));
                    unchecked_.Add(BenchBaseline.PerAddFromC(ctx, s, a, b, n, false));
                    sw = Stopwatch.StartNew();
                    sink += icalls ? TrivialInternalCalls(n) : TrivialPInvokes(n);
                    floor.Add(sw.Elapsed.TotalMilliseconds * 1e6 / n);
                }
                cs.Sort(); c.Sort(); unchecked_.Sort(); floor.Sort();
                string way = icalls ? "internal call" : "P/Invoke";
                Console.WriteLine($"csharp ({(icalls ? "internal calls" : "P/Invoke")}): add of 16 floats through C# {Spread(cs)} ns; from C {Spread(c)} ns; " +
                                  $"median ratio {cs[3] / c[3]:F2}x; from C with the thread check off {Spread(unchecked_)} ns; " +
                                  $"a trivial {way} alone (Mono's floor) {Spread(floor)} ns, " +
                                  $"floor ratio {(unchecked_[3] + floor[3]) / c[3]:F2}x {sink % 2}");
            }
        }
    }

    // Methods of their own: the loop calls the internal call itself, as the ops do, compiled on
    // its first call, after the registration.
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    static int TrivialInternalCalls(int n) { int sink = 0; for (int i = 0; i < n; i++) sink += InternalCalls.AbiVersion(); return sink; }
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    static int TrivialPInvokes(int n) { int sink = 0; for (int i = 0; i < n; i++) sink += Context.AbiVersion; return sink; }

    internal static void ManyThreads() {
        using (var ctx = new Context()) {
            var a = ctx.Zeros(DType.F32, 16);
            var one = ctx.Ones(DType.F32, 16);
            var errors = new List<Exception>();
            var threads = new System.Threading.Thread[4];
            for (int t = 0; t < 4; t++) {
                threads[t] = new System.Threading.Thread(() => {
                    try {
                        for (int i = 0; i < 2000; i++) {
                            var y = ctx.Add(a, one);
                            Check(y.ToFloats()[15] == 1, "wrong sum");
                            y.Free();
                        }
                    } catch (Exception e) { lock (errors) errors.Add(e); }
                });
                threads[t].Start();
            }
            foreach (var t in threads) t.Join();
            Check(errors.Count == 0, "threads: " + (errors.Count > 0 ? errors[0].ToString() : ""));
        }
    }

    static long ResidentBytes() {
        foreach (var line in System.IO.File.ReadAllLines("/proc/self/status"))
            if (line.StartsWith("VmRSS:")) return long.Parse(line.Split(new[] { ' ', '\t' }, StringSplitOptions.RemoveEmptyEntries)[1]) * 1024;
        throw new Exception("no VmRSS");
    }

    static void DropContexts(int n) {
        for (int i = 0; i < n; i++) {
            var ctx = new Context();
            ctx.OpenScope("dropped", 1 << 20);
            ctx.Zeros(DType.F32, 1 << 18);  // touches the whole MiB
        }
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        GC.WaitForPendingFinalizers();
    }

    // 500 contexts of 1 MiB dropped without Dispose, three times over: resident memory bounded.
    internal static void DroppedContexts() {
        long before = ResidentBytes();
        DropContexts(500);
        long first = ResidentBytes();
        DropContexts(1000);
        long after = ResidentBytes();
        Console.WriteLine($"csharp: resident before {before >> 20} MiB, after 500 dropped 1 MiB contexts {first >> 20} MiB, after 1500 {after >> 20} MiB");
        Check(after - first < (96L << 20) && after - before < (256L << 20), "resident memory grows with dropped contexts");
    }

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    static void OpenAndDrop(Context ctx, string name) => ctx.OpenScope(name, 1 << 16);

    // A Scope dropped without Dispose is closed by its SafeHandle when collected (if innermost);
    // one disposed is closed at once, and its handle then closes nothing more.
    internal static void DroppedScopes() {
        using (var ctx = new Context()) {
            OpenAndDrop(ctx, "dropped");
            Check(ctx.CurrentScope()?.Name == "dropped", "open until collected");
            GC.Collect();
            GC.WaitForPendingFinalizers();
            Check(ctx.CurrentScope() == null, "a collected Scope closes its scope");
            var kept = ctx.OpenScope("kept", 1 << 16);
            using (var inner = ctx.OpenScope("inner", 1 << 16)) { }
            Check(kept.Equals(ctx.CurrentScope()), "a disposed inner scope is closed");
            kept.Dispose();
            kept.Dispose();  // twice: nothing
            Check(ctx.CurrentScope() == null, "disposed");
        }
    }

    // Weights in a storage dtype: converted, a matmul's weight as stored, refused by arithmetic.
    internal static void StorageDtypes() {
        using (var ctx = new Context()) {
            var w = new float[4 * 256]; var x = new float[256];  // 256: the K-quants' super blocks
            for (int i = 0; i < w.Length; i++) w[i] = (i % 7) - 3;
            for (int i = 0; i < x.Length; i++) x[i] = 127f / 128;  // 8-bit activation blocks hold it exactly (step 1/128)
            Tensor wf = ctx.FromFloats(new long[] { 4, 256 }, w), xf = ctx.FromFloats(new long[] { 1, 256 }, x);
            foreach (DType dt in Enum.GetValues(typeof(DType))) {  // every storage dtype of the generated list
                if (dt == DType.F32 || dt == DType.F64 || dt == DType.I32) continue;
                var wq = ctx.Convert(wf, dt);
                Check(wq.Info().DType == dt, $"dtype {dt}");
                var got = ctx.MatMul(xf, ctx.Transpose(wq, 0, 1)).ToFloats();
                var want = ctx.MatMul(xf, ctx.Transpose(ctx.Convert(wq, DType.F32), 0, 1)).ToFloats();
                for (int j = 0; j < got.Length; j++) Check(Math.Abs(got[j] - want[j]) < 1e-3, $"{dt} output {j}");
                Throws<DtypeException>(() => ctx.Add(wq, wq), $"add of {dt}");
            }
        }
    }

    internal static void WholeApi() {
        Check(Context.AbiVersion == BindingInfo.AbiVersion, "abi version");
        Context.BlasThreads = 1;
        Check(Context.BlasThreads == 1, "blas threads");
        Throws<InvalidArgumentException>(() => Context.BlasThreads = 0, "0 blas threads");
        // Under Mono the elementwise ops go through bounded internal calls (right sums too); past
        // the bound, on a failure, and under .NET through P/Invoke.
        using (var ctx = new Context()) {
            bool mono = Type.GetType("Mono.Runtime") != null;
            Check(Context.MonoInternalCalls == mono, mono ? "internal calls under Mono" : "no internal calls under .NET");
            var x = ctx.FromFloats(new long[] { 4 }, new float[] { 1, 2, 3, 4 });
            Check(ctx.Add(x, x).ToFloats()[3] == 8 && ctx.Sub(x, x).ToFloats()[3] == 0, "add through internal calls");
            Check(ctx.Mul(x, x).ToFloats()[3] == 16 && ctx.Div(x, x).ToFloats()[3] == 1, "mul, div through internal calls");
            var wide = ctx.Ones(DType.F32, 16385);  // past the internal calls' bound of 16384 elements
            Check(ctx.Add(wide, wide).ToFloats()[16384] == 2, "add past the internal calls' bound");
            // Their failures: the ordinary call says why (Elementwise.g.cs).
            Throws<InvalidHandleException>(() => ctx.Sub(x, default(Tensor)), "default(Tensor), internal calls", "names no tensor");
            using (var other = new Context()) {
                var foreign = other.FromFloats(new long[] { 4 }, new float[4]);
                Throws<InvalidHandleException>(() => ctx.Mul(foreign, x), "another Context's, internal calls", "another Context");
                Throws<InvalidHandleException>(() => ctx.Div(x, foreign), "another Context's second, internal calls", "another Context");
            }
            Throws<DtypeException>(() => ctx.Add(x, ctx.FromInts(new long[] { 4 }, new int[4])), "mixed dtypes, internal calls");
            var s = ctx.OpenScope("step");
            var made = ctx.Add(x, x);
            s.Reset();
            Throws<StorageClosedException>(() => ctx.Add(made, x), "a reset scope's tensor, internal calls", "'step'");
            s.Dispose();
        }
        using (var ctx = new Context()) {
            using (var big = ctx.OpenScope("big", Growth.Grow, 0, (4L << 30) + 4096)) {
                ctx.Zeros(DType.F32, 2048);  // 8 KiB: past 4096, inside the 4 GiB cap (no uint cast)
                Check(big.Stats().UsedBytes >= 8192, "a 4 GiB cap cut short");
            }
            using (var fixedScope = ctx.OpenScope("fixed", Growth.Fixed, 4096, 0)) {
                Throws<ScopeFullException>(() => ctx.Zeros(DType.F32, 4096), "past a fixed slab");
                Check(fixedScope.Equals(ctx.CurrentScope()) && ctx.CurrentScope().Name == "fixed", "current scope");
                Check(fixedScope.StatsJson().Contains("fixed"), "stats json");
            }
            Check(ctx.CurrentScope() == null, "ambient after close");
            var f = ctx.Full(DType.I32, 7, 2, 3);
            var info = ctx.Transpose(f, 0, 1).Info();
            Check(info.DType == DType.I32 && info.Shape[0] == 3 && info.Strides[1] == 3 && info.Storage == "ambient", "info");
            Throws<DtypeException>(() => f.ToFloats(), "i32 read as f32");
            Throws<InvalidArgumentException>(() => ctx.OpenScope("a\0b"), "NUL in a name");
            var data = new float[] { 1, 2, 3, 4 };
            var w = ctx.Wrap(new long[] { 2, 2 }, data);
            data[3] = 40;
            Check(w.ToFloats()[3] == 40, "wrapped (pinned) array");
            using (var other = new Context())
                Throws<InvalidHandleException>(() => ctx.Add(w, other.Ones(DType.F32, 2, 2)), "another context's tensor");
            var kv = ctx.Ones(DType.F32, 2, 5, 4);
            var att = ctx.Attention(ctx.Ones(DType.F32, 2, 1, 4), kv, kv, 3, 0.5).ToFloats();
            Check(att.Length == 8 && att[7] == 1, "attention");
            var path = System.IO.Path.GetTempFileName();
            ctx.SaveSafetensors(path, new System.Collections.Generic.Dictionary<string, Tensor> { { "w", w }, { "f", f } });
            var sf = ctx.OpenSafetensors(path);
            using (sf) Check(sf.Names().Count == 2 && sf.Get("w").ToFloats()[3] == 40, "get by name");
            Throws<InvalidHandleException>(() => sf.Get("w"), "a disposed file");  // its SafeHandle closed it once
            Check(sf.Names().Count == 0, "a disposed file has no names");
            sf.Dispose();  // a second Dispose does nothing
            Tensor mapped;
            using (var mf = ctx.MapSafetensors(path)) {
                Check(mf.Maps("w"), "mapped");
                mapped = mf.Get("w");
            }
            Check(mapped.ToFloats()[3] == 40, "a mapped tensor outlives its file's close");
            Throws<InvalidArgumentException>(() => ctx.CopyInto(w, mapped), "copy into a mapped tensor");
            System.IO.File.Delete(path);
        }
    }

    // The C tests' tiny model (tiny.gguf, written beside the run by test.sh): text in, text out.
    internal static void ModelAndSessions() {
        using (var model = Model.Open("tiny.gguf")) {
            Check(model.VocabSize == 271 && model.Layers == 2 && model.KvHeads == 2 && model.HasVocabulary, "model info");
            var ids = model.Tokenize("abc ab");
            Check(ids.Length == 3 && ids[0] == model.Bos, "tokenize");
            var pieces = new System.Collections.Generic.List<string>();
            var again = new System.Collections.Generic.List<string>();
            using (var chat = model.NewSession(contextLength: 64)) {
                foreach (var piece in chat.Generate("abc ab", maxTokens: 10)) pieces.Add(piece);
                chat.Rewind(3);
                foreach (var piece in chat.Generate(null, maxTokens: 10)) again.Add(piece);
                Check(string.Join("|", pieces) == string.Join("|", again), "rewind gives the same tokens again");
            }
            var warm = new Sampler { Temperature = 1.2f, TopK = 20, TopP = 0.9f, Seed = 77 };
            int[] a = new int[12], b = new int[12];
            using (var s1 = model.NewSession(kvDType: DType.F16))
            using (var s2 = model.NewSession(kvDType: DType.F16)) {
                s1.FeedText("abc"); s2.FeedText("abc");
                for (int i = 0; i < 12; i++) { a[i] = s1.Sample(warm); s1.Feed(new[] { a[i] }); b[i] = s2.Sample(warm); s2.Feed(new[] { b[i] }); }
            }
            Check(string.Join(",", a) == string.Join(",", b), "one seed, the same tokens");
            var small = model.NewSession(contextLength: 4);
            Throws<ShapeException>(() => small.Feed(new[] { 1, 2, 3, 4, 5 }), "a full context", "context of 4 tokens is full");
            Throws<InvalidArgumentException>(() => small.Feed(new[] { 271 }), "an id past the vocabulary", "not in the vocabulary");
            model.Dispose();  // the session keeps the weights until it is disposed
            small.Feed(new[] { 1, 2 });
            Check(small.Position == 2, "a session outlives its model's Dispose");
            small.Dispose();
            Throws<InvalidHandleException>(() => small.Feed(new[] { 1 }), "a disposed session", "session is closed");
            Throws<InvalidHandleException>(() => model.NewSession(), "a disposed model", "model is closed");
        }
        Throws<IoException>(() => Model.Open("/nonexistent/model.gguf"), "a missing file", "nonexistent");
        // Open's options: weights converted at open, the decode copies (f32 weights copied as
        // stored: the same tokens, more bytes), a dtype the products do not take refused.
        var runs = new System.Collections.Generic.List<string>();
        var dtypes = new DType?[] { null, null, DType.BF16 };
        for (int i = 0; i < 3; i++) {
            DType? dtype = dtypes[i];
            using (var model = Model.Open("tiny.gguf", dtype, i == 1))
            using (var chat = model.NewSession()) {
                Check(model.WeightsDType == (dtype ?? DType.F32) && (model.RepackedBytes > 0) == (i == 1), "weights as asked");
                runs.Add(string.Join("|", chat.Generate("abc ab", maxTokens: 8)));
            }
        }
        Check(runs[0] == runs[1] && runs[2].Length > 0, "repacked weights give the same tokens");
        Throws<DtypeException>(() => Model.Open("tiny.gguf", DType.I32), "i32 weights", "i32");
    }

    static int Main(string[] args) {
        if (args.Length > 0 && args[0] == "--bench") { Bench(); return 0; }
        Console.WriteLine("tensorlife " + Context.Version + " from C# (Mono " + Environment.Version + ")");
        Run("decode loop scenario", DecodeLoop);
        Run("misuse gives clear exceptions", Misuse);
        Run("safetensors and JSON", SafetensorsAndJson);
        Run("views, reductions and caches", ViewsReductionsAndCaches);
        Run("dropped contexts are released", DroppedContexts);
        Run("dropped scopes are closed", DroppedScopes);
        Run("one context, many threads", ManyThreads);
        Run("the whole API", WholeApi);
        Run("storage dtypes", StorageDtypes);
        Run("GGUF metadata and tensors", Gguf);
        Run("RoPE, grouped-query attention, an f16 cache", LlamaOps);
        Run("exception names beside System's", ExceptionNames);
        Run("models and sessions: text in, text out", ModelAndSessions);
        Console.WriteLine($"csharp: {passed} passed, {failed} failed");
        return failed == 0 && passed > 0 ? 0 : 1;
    }
}
