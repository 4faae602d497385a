import org.tensorlife.ScopeStats;
import org.tensorlife.BindingInfo;
import org.tensorlife.Context;
import org.tensorlife.Scope;
import org.tensorlife.Tensor;
import org.tensorlife.TensorLifeException;
import org.tensorlife.BenchBaseline;
import org.tensorlife.DType;
import org.tensorlife.Growth;
import org.tensorlife.SafetensorsFile;
import org.tensorlife.GgufFile;
import org.tensorlife.GgufType;
import org.tensorlife.RopeMode;
import org.tensorlife.Model;
import org.tensorlife.Sampler;
import org.tensorlife.Session;

/** The bindings' shared scenario in Java; prints "N passed, N failed" and exits non-zero on
 *  any failure.  With --bench, the tiny-op benchmark instead. */
public final class TensorLifeTest {
    private static int passed, failed;

    interface Body { void run() throws Exception; }

    private static void test(String name, Body body) {
        try {
            body.run();
            passed++;
            System.out.println("PASS " + name);
        } catch (Throwable t) {
            failed++;
            System.out.println("FAIL " + name + ": " + t);
        }
    }

    private static void check(boolean ok, String what) {
        if (!ok) throw new AssertionError(what);
    }

    static final int D = 8;

    /** tests/golden/metadata.gguf (make_golden.py, copied beside the run by test.sh). */
    static void gguf() {
        try (Context ctx = new Context()) {
            GgufFile f = ctx.openGguf("metadata.gguf");
            check(f.names().equals(java.util.List.of("w.q8_0", "x.f32")), "names " + f.names());
            check(f.keys().contains("fixture.ids"), "keys");
            check(f.getString("general.architecture", -1).equals("tensorlife-fixture"), "architecture");
            check(f.getInt("fixture.u32", -1) == 4000000000L && f.getInt("fixture.i8", -1) == -5, "ints");
            check(f.getInt("fixture.bool", -1) == 1 && f.getFloat("fixture.f64", -1) == -2.25, "bool, f64");
            check(f.getFloat("fixture.scores", 1) == -1.5 && f.getInt("fixture.ids", 2) == 9, "arrays of numbers");
            check(f.getString("fixture.strings", 1).equals("\u03b2eta") && f.getString("fixture.strings", 2).isEmpty(),
                  "arrays of strings");
            check(f.keyType("fixture.ids").equals(new GgufFile.KeyType(GgufType.ARRAY, GgufType.INT32, 3)), "key type");
            try { f.getInt("fixture.u64", -1); check(false, "uint64 past INT64_MAX"); }
            catch (TensorLifeException.InvalidArgumentException e) { }
            try { f.getInt("fixture.ids", 3); check(false, "past the end"); } catch (TensorLifeException.ShapeException e) { }
            try { f.getInt("no.such.key", -1); check(false, "missing key"); } catch (TensorLifeException.NotFoundException e) { }
            try { f.getInt("fixture\0u8", -1); check(false, "NUL in a key"); }
            catch (TensorLifeException.InvalidArgumentException e) { }
            Tensor w = f.get("w.q8_0");
            check(w.info().dtype() == DType.Q8_0 && w.info().shape()[1] == 64 && w.info().readOnly(), "q8_0 tensor");
            check(f.get("x.f32").toFloats()[5] == 5f, "f32 tensor");
            f.close();
            try { f.getInt("fixture.u8", -1); check(false, "closed file"); }
            catch (TensorLifeException.InvalidHandleException e) { }
            try { ctx.openGguf("TensorLifeTest.missing"); check(false, "missing file"); } catch (TensorLifeException.IoException e) { }
        }
    }

    static void llamaOps() {
        try (Context ctx = new Context()) {
            float[] x = {1, 2, 3, 4};
            Tensor xt = ctx.fromFloats(new long[] {1, 4}, x);
            int[][][] pairs = {{{0, 2}, {1, 3}}, {{0, 1}, {2, 3}}};
            RopeMode[] modes = {RopeMode.HALVES, RopeMode.INTERLEAVED};
            for (int m = 0; m < 2; m++) {
                double[] want = {1, 2, 3, 4};
                for (int i = 0; i < 2; i++) {
                    double angle = 3 * Math.pow(10000, -2.0 * i / 4), a = x[pairs[m][i][0]], b = x[pairs[m][i][1]];
                    want[pairs[m][i][0]] = a * Math.cos(angle) - b * Math.sin(angle);
                    want[pairs[m][i][1]] = a * Math.sin(angle) + b * Math.cos(angle);
                }
                float[] got = ctx.rope(xt, 3, 10000, modes[m]).toFloats();
                for (int i = 0; i < 4; i++) check(Math.abs(got[i] - want[i]) < 1e-5, modes[m] + " element " + i);
            }
            Tensor k = ctx.zeros(DType.F16, 2, 3, 2), v = ctx.zeros(DType.F16, 2, 3, 2);
            ctx.copyInto(ctx.fromFloats(new long[] {2, 3, 2}, new float[] {.5f, .5f, .5f, .5f, .5f, .5f, .5f, .5f, .5f, .5f, .5f, .5f}), k);
            ctx.copyInto(ctx.fromFloats(new long[] {2, 3, 2}, new float[] {1, 2, 1, 2, 1, 2, 5, 6, 5, 6, 5, 6}), v);
            Tensor q = ctx.fromFloats(new long[] {4, 1, 2}, new float[] {1, 1, 1, 1, 1, 1, 1, 1});
            check(java.util.Arrays.equals(ctx.attention(q, k, v, 3, 0.5).toFloats(), new float[] {1, 2, 1, 2, 5, 6, 5, 6}),
                  "query heads 0, 1 read kv head 0; 2, 3 kv head 1");
        }
    }

    static void decodeLoop() {
        try (Context ctx = new Context()) {
            float[] w = new float[D * D], b = new float[D];
            for (int i = 0; i < w.length; i++) w[i] = (i % 7) / 7f - 0.4f;
            for (int i = 0; i < D; i++) b[i] = i / 10f;
            Tensor tw = ctx.fromFloats(new long[] {D, D}, w), tb = ctx.fromFloats(new long[] {D}, b);
            Tensor kept = null;
            try (Scope step = ctx.openScope("decode-step", 0)) {
                ScopeStats first = null;
                for (int s = 0; s < 50; s++) {
                    float[] x = new float[D];
                    for (int i = 0; i < D; i++) x[i] = ((s + i) % 5) - 2;
                    Tensor p = ctx.softmax(ctx.add(ctx.matmul(ctx.fromFloats(new long[] {1, D}, x), tw), tb), -1);
                    float[] got = p.toFloats();
                    double[] logits = new double[D];
                    double top = Double.NEGATIVE_INFINITY, total = 0;
                    for (int j = 0; j < D; j++) {
                        for (int k = 0; k < D; k++) logits[j] += (double) x[k] * w[k * D + j];
                        logits[j] += b[j];
                        top = Math.max(top, logits[j]);
                    }
                    for (double l : logits) total += Math.exp(l - top);
                    for (int j = 0; j < D; j++)
                        check(Math.abs(got[j] - Math.exp(logits[j] - top) / total) < 1e-5, "step " + s + " col " + j);
                    kept = p;
                    step.reset();
                    ScopeStats st = step.stats();
                    if (s == 0) first = st;
                    else check(st.slabBytes() == first.slabBytes() && st.peakBytes() == first.peakBytes()
                               && st.growEvents() == first.growEvents(), "no growth after step 1");
                }
                try {
                    kept.toFloats();
                    check(false, "a tensor kept past its reset was read");
                } catch (TensorLifeException.StorageClosedException e) {
                    check(e.getMessage().contains("storage 'decode-step'"), "message names the storage: " + e.getMessage());
                    check(e.getMessage().contains("gen 49 is closed (scope is at gen 50)"), e.getMessage());
                }
            }
        }
    }

    static void misuse() {
        Context ctx = new Context();
        Scope s = ctx.openScope("frame", 1024);
        Tensor x = ctx.fromFloats(new long[] {2}, new float[] {1, 2});
        Tensor out = x.retain(null);
        s.close();
        try { s.close(); check(false, "closing twice"); } catch (TensorLifeException.InvalidHandleException e) { }
        check(out.toFloats()[1] == 2, "retained");
        try { x.toFloats(); check(false, "use after close"); } catch (TensorLifeException.StorageClosedException e) { }
        try { ctx.fromFloats(new long[] {2, 3}, new float[] {1, 2}); check(false, "wrong size"); }
        catch (TensorLifeException.InvalidArgumentException e) { check(e.getMessage().contains("bytes"), e.getMessage()); }
        try { out.read(new float[1]); check(false, "short buffer"); } catch (TensorLifeException.InvalidArgumentException e) { }
        try { ctx.matmul(out, out); check(false, "bad matmul"); } catch (TensorLifeException.ShapeException e) { }
        Tensor ids = ctx.fromInts(new long[] {2}, new int[] {4, 5});
        try { ctx.add(ids, out); check(false, "mixed dtypes"); } catch (TensorLifeException.DtypeException e) { }
        check(ids.toInts()[1] == 5, "ints");
        ctx.close();
        ctx.close();
        try { ctx.fromFloats(new long[] {1}, new float[] {1}); check(false, "closed context"); }
        catch (TensorLifeException.InvalidHandleException e) { }
        try { out.toFloats(); check(false, "tensor of a closed context"); } catch (TensorLifeException.InvalidHandleException e) { }
    }

    static void safetensorsAndJson() throws Exception {
        try (Context ctx = new Context()) {
            java.util.Map<String, Tensor> m = new java.util.HashMap<>();
            m.put("a", ctx.fromFloats(new long[] {2, 2}, new float[] {1, 2, 3, Float.POSITIVE_INFINITY}));
            m.put("ids", ctx.fromInts(new long[] {3}, new int[] {7, -8, 9}));
            Tensor kv = ctx.ones(DType.F32, 2, 5, 4);
            float[] att = ctx.attention(ctx.ones(DType.F32, 2, 1, 4), kv, kv, 3, 0.5).toFloats();
            check(att.length == 8 && att[7] == 1f, "attention");
            java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("tl-java");
            String path = dir.resolve("w.safetensors").toString();
            ctx.saveSafetensors(path, m);
            java.util.Map<String, Tensor> back = ctx.loadSafetensors(path);
            check(back.get("a").toFloats()[3] == Float.POSITIVE_INFINITY, "a");
            check(back.get("ids").toInts()[1] == -8, "ids");
            try { ctx.loadSafetensors(dir.resolve("missing").toString()); check(false, "missing file"); }
            catch (TensorLifeException e) { check(e.getMessage().contains("TL_E_IO"), e.getMessage()); }
            String js = m.get("a").toJson();
            check(js.contains("\"inf\""), js);
            check(ctx.tensorFromJson(js).toFloats()[2] == 3, "json round trip");
            try { ctx.tensorFromJson("{"); check(false, "bad json"); }
            catch (TensorLifeException e) { check(e.getMessage().contains("TL_E_PARSE"), e.getMessage()); }
            try (Scope s = ctx.openScope("report-me", 0)) {
                check(ctx.reportJson().contains("\"name\":\"report-me\""), ctx.reportJson());
                check(s.stats().liveTensors() == 0, "an empty scope");
            }
            new java.io.File(path).delete();
            dir.toFile().delete();
        }
    }

    static void viewsReductionsAndCaches() {
        try (Context ctx = new Context()) {
            Tensor a = ctx.fromFloats(new long[] {2, 3}, new float[] {1, 5, 3, -4, 2, 6});
            float[] flat = ctx.reshape(ctx.transpose(a, 0, 1), 6).toFloats();
            check(flat[1] == -4 && flat[2] == 5, "transpose+reshape");
            int[] best = ctx.argmax(a, -1).toInts();
            check(best[0] == 1 && best[1] == 2, "argmax");
            check(ctx.sum(a, 0, false).toFloats()[2] == 9, "sum");
            Tensor cache = ctx.fromFloats(new long[] {3, 3}, new float[9]);
            ctx.copyInto(ctx.gatherRows(a, ctx.fromInts(new long[] {1}, new int[] {1})), ctx.slice(cache, 0, 2, 1));
            float[] c = cache.toFloats();
            check(c[6] == -4 && c[8] == 6 && c[0] == 0, "cache row");
            check(ctx.concat(0, a, a).shape()[0] == 4, "concat");
            float r = ctx.rmsnorm(a, null, 1e-6).toFloats()[0];
            check(Math.abs(r - 1 / Math.sqrt(35.0 / 3 + 1e-6)) < 1e-5, "rmsnorm");
            try { ctx.slice(a, 0, 1, 5); check(false, "bad slice"); } catch (TensorLifeException.ShapeException e) { }
        }
    }

    static String spread(double[] v) {
        java.util.Arrays.sort(v);
        return String.format("min %.1f / median %.1f / max %.1f", v[0], v[v.length / 2], v[v.length - 1]);
    }

    /** Interleaved rounds, Java adds, the same adds from C (the context's thread check on, as a C
     *  program has it, and off, as the binding's record runs it), then a trivial JNI call, 7
     *  times: min/median/max.  The floor, the least any JNI binding can take: the add with the
     *  check off plus the trivial call. */
    static void bench() {
        try (Context ctx = new Context()) {
            Tensor a = ctx.fromFloats(new long[] {16}, new float[16]), b = ctx.fromFloats(new long[] {16}, new float[16]);
            try (Scope s = ctx.openScope("bench", 1 << 16)) {
                final int n = 200000, rounds = 7;
                double[] java = new double[rounds], c = new double[rounds], unchecked = new double[rounds],
                         crossing = new double[rounds];
                int[] sink = {0};
                for (int rep = 0; rep < rounds; rep++) {
                    long t0 = System.nanoTime();
                    for (int i = 0; i < n; i++) {
                        ctx.add(a, b);
                        if ((i & 255) == 255) s.reset();
                    }
                    java[rep] = (System.nanoTime() - t0) / (double) n;
                    c[rep] = BenchBaseline.perAddFromC(ctx, s, a, b, n, true);
                    unchecked[rep] = BenchBaseline.perAddFromC(ctx, s, a, b, n, false);
                    crossing[rep] = BenchBaseline.perTrivialCall(n, sink);
                }
                String js = spread(java), cs = spread(c), us = spread(unchecked), xs = spread(crossing);
                final int m = rounds / 2;
                System.out.printf("java: add of 16 floats through Java %s ns; from C %s ns; median ratio %.2fx; "
                                  + "from C with the thread check off %s ns; a trivial JNI call alone (the JVM's floor) %s ns, "
                                  + "floor ratio %.2fx %d%n",
                                  js, cs, java[m] / c[m], us, xs, (unchecked[m] + crossing[m]) / c[m], sink[0] & 1);
            }
        }
    }

    static long residentBytes() throws Exception {
        for (String line : java.nio.file.Files.readAllLines(java.nio.file.Paths.get("/proc/self/status")))
            if (line.startsWith("VmRSS:")) return Long.parseLong(line.split("\\s+")[1]) * 1024;
        throw new AssertionError("no VmRSS");
    }

    static void dropContexts(int n) {
        for (int i = 0; i < n; i++) {
            Context ctx = new Context();
            ctx.openScope("dropped", 1 << 20);
            ctx.zeros(DType.F32, 1 << 18); // touches the whole MiB
        }
    }

    /** 500 contexts of 1 MiB dropped without close, three times over: resident memory bounded. */
    static void droppedContexts() throws Exception {
        long before = residentBytes();
        dropContexts(500);
        System.gc();
        Thread.sleep(100);
        long first = residentBytes();
        dropContexts(1000);
        System.gc();
        Thread.sleep(100);
        long after = residentBytes();
        System.out.printf("java: resident before %d MiB, after 500 dropped 1 MiB contexts %d MiB, after 1500 %d MiB%n",
                          before >> 20, first >> 20, after >> 20);
        check(after - first < 96L << 20 && after - before < 256L << 20, "resident memory grows with dropped contexts");
    }

    /** One Context from 4 threads at once: serialised, every result right. */
    static void manyThreads() throws Exception {
        try (Context ctx = new Context()) {
            Tensor a = ctx.zeros(DType.F32, 16), one = ctx.ones(DType.F32, 16);
            java.util.List<Throwable> errors = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
            Thread[] ts = new Thread[4];
            for (int t = 0; t < 4; t++) {
                ts[t] = new Thread(() -> {
                    try {
                        for (int i = 0; i < 2000; i++) {
                            Tensor y = ctx.add(a, one);
                            check(y.toFloats()[15] == 1f, "wrong sum");
                            y.free();
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                });
                ts[t].start();
            }
            for (Thread t : ts) t.join();
            check(errors.isEmpty(), "threads: " + errors);
        }
    }

    /** Weights in a storage dtype: converted, a matmul's weight as stored, refused by arithmetic. */
    static void storageDtypes() {
        try (Context ctx = new Context()) {
            float[] w = new float[4 * 256], x = new float[256];  // 256: the K-quants' super blocks
            for (int i = 0; i < w.length; i++) w[i] = (i % 7) - 3;
            java.util.Arrays.fill(x, 127f / 128);  // 8-bit activation blocks hold it exactly (step 1/128)
            Tensor wf = ctx.fromFloats(new long[] {4, 256}, w), xf = ctx.fromFloats(new long[] {1, 256}, x);
            for (DType dt : DType.values()) {  // every storage dtype of the generated list
                if (dt == DType.F32 || dt == DType.F64 || dt == DType.I32) continue;
                Tensor wq = ctx.convert(wf, dt);
                check(wq.info().dtype() == dt, "dtype " + dt);
                float[] got = ctx.matmul(xf, ctx.transpose(wq, 0, 1)).toFloats();
                float[] want = ctx.matmul(xf, ctx.transpose(ctx.convert(wq, DType.F32), 0, 1)).toFloats();
                for (int j = 0; j < got.length; j++) check(Math.abs(got[j] - want[j]) < 1e-3, dt + " output " + j);
                try {
                    ctx.add(wq, wq);
                    check(false, "add of " + dt + " was not refused");
                } catch (TensorLifeException.DtypeException e) {
                    check(e.getMessage().contains("add") && e.getMessage().contains(dt.name().toLowerCase()), e.getMessage());
                }
            }
        }
    }

    static void wholeApi() throws Exception {
        check(Context.abiVersion() == BindingInfo.ABI_VERSION, "abi version");
        Context.setBlasThreads(1);
        check(Context.blasThreads() == 1, "blas threads");
        try {
            Context.setBlasThreads(0);
            check(false, "0 blas threads");
        } catch (TensorLifeException.InvalidArgumentException expected) {
        }
        try (Context ctx = new Context()) {
            try (Scope fixed = ctx.openScope("fixed", Growth.FIXED, 4096, 0)) {
                try {
                    ctx.zeros(DType.F32, 4096);
                    check(false, "past a fixed slab");
                } catch (TensorLifeException.ScopeFullException expected) {
                }
                ctx.zeros(DType.F32, 16);
                check(fixed.equals(ctx.currentScope()) && ctx.currentScope().name().equals("fixed"), "current scope");
                check(fixed.statsJson().contains("fixed"), "stats json");
            }
            check(ctx.currentScope() == null, "ambient after close");
            try (Scope capped = ctx.openScope("capped", Growth.GROW, 0, (1L << 32) + 4096)) {
                ctx.zeros(DType.F32, 2048); // 8 KiB: past 4096, inside 4 GiB
                check(capped.stats().usedBytes() >= 8192, "a 4 GiB cap cut short");
            }
            Tensor f = ctx.full(DType.I32, 7, 2, 3);
            check(f.toInts()[5] == 7, "full");
            Tensor.Info info = ctx.transpose(f, 0, 1).info();
            check(info.dtype() == DType.I32 && info.shape()[0] == 3 && info.strides()[0] == 1 && info.strides()[1] == 3
                  && info.storage().equals("ambient") && info.count() == 6 && !info.readOnly(), "info");
            try {
                f.toFloats();
                check(false, "i32 read as f32");
            } catch (TensorLifeException.DtypeException expected) {
            }
            try {
                ctx.openScope("a\0b", 0);
                check(false, "NUL in a name");
            } catch (TensorLifeException.InvalidArgumentException expected) {
            }
            java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocateDirect(16).order(java.nio.ByteOrder.nativeOrder());
            buf.asFloatBuffer().put(new float[] {1, 2, 3, 4});
            Tensor w = ctx.wrap(DType.F32, new long[] {2, 2}, buf);
            buf.putFloat(12, 40f);
            check(w.toFloats()[3] == 40f, "wrapped memory");
            try (Context other = new Context()) {
                ctx.add(w, other.ones(DType.F32, 2, 2));
                check(false, "another context's tensor");
            } catch (TensorLifeException.InvalidHandleException expected) {
            }
            Tensor kv = ctx.ones(DType.F32, 2, 5, 4);
            float[] att = ctx.attention(ctx.ones(DType.F32, 2, 1, 4), kv, kv, 3, 0.5).toFloats();
            check(att.length == 8 && att[7] == 1f, "attention");
            java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("tl-java");
            String path = dir.resolve("m.safetensors").toString();
            ctx.saveSafetensors(path, java.util.Map.of("w", w, "f", f));
            try (SafetensorsFile sf = ctx.openSafetensors(path)) {
                check(sf.names().size() == 2 && sf.get("w").toFloats()[3] == 40f, "get by name");
            }
            Tensor mapped;
            try (SafetensorsFile mf = ctx.mapSafetensors(path)) {
                check(mf.maps("w"), "mapped");
                mapped = mf.get("w");
            }
            check(mapped.toFloats()[3] == 40f, "a mapped tensor outlives its file's close");
            try {
                ctx.copyInto(w, mapped);
                check(false, "copy into a mapped tensor");
            } catch (TensorLifeException.InvalidArgumentException expected) {
            }
            java.nio.file.Files.delete(java.nio.file.Paths.get(path));
            java.nio.file.Files.delete(dir);
        }
    }

    /** The C tests' tiny model (tiny.gguf, written beside the run by test.sh): text in, text out. */
    static void modelsAndSessions() {
        Model model = Model.open("tiny.gguf");
        try {
            check(model.vocabSize == 271 && model.layers == 2 && model.kvHeads == 2 && model.hasVocabulary, "model info");
            int[] ids = model.tokenize("abc ab");
            check(ids.length == 3 && ids[0] == model.bos, "tokenize " + java.util.Arrays.toString(ids));
            java.util.List<String> pieces = new java.util.ArrayList<>(), again = new java.util.ArrayList<>();
            try (Session chat = model.newSession(64, DType.F32, 0)) {
                for (String piece : chat.generate("abc ab", 10)) pieces.add(piece);
                chat.rewind(3);
                for (String piece : chat.generate(null, 10)) again.add(piece);
                check(pieces.equals(again), "rewind gives the same tokens again");
            }
            Sampler warm = new Sampler(1.2f, 20, 0.9f, 0f, 1f, 64, 77);
            int[] a = new int[12], b = new int[12];
            try (Session s1 = model.newSession(0, DType.F16, 0); Session s2 = model.newSession(0, DType.F16, 0)) {
                s1.feedText("abc");
                s2.feedText("abc");
                for (int i = 0; i < 12; i++) {
                    s1.feed(a[i] = s1.sample(warm));
                    s2.feed(b[i] = s2.sample(warm));
                }
            }
            check(java.util.Arrays.equals(a, b), "one seed, the same tokens");
            check(model.tokenize("😀 ü").length > 2, "text past U+FFFF reaches the tokenizer as UTF-8");
            Session small = model.newSession(4, DType.F32, 0);
            try {
                small.feed(1, 2, 3, 4, 5);
                throw new AssertionError("a full context took more");
            } catch (TensorLifeException.ShapeException e) {
                check(e.getMessage().contains("context of 4 tokens is full"), e.getMessage());
            }
            model.close();  // the session keeps the weights until it is closed
            small.feed(1, 2);
            check(small.position() == 2, "a session outlives its model's close");
            small.close();
            try {
                small.feed(1);
                throw new AssertionError("a closed session was used");
            } catch (TensorLifeException.InvalidHandleException e) {
                check(e.getMessage().contains("session is closed"), e.getMessage());
            }
        } finally {
            model.close();  // a second close does nothing
        }
        try {
            Model.open("/nonexistent/model.gguf");
            throw new AssertionError("a missing model opened");
        } catch (TensorLifeException.IoException e) {
            check(e.getMessage().contains("nonexistent"), e.getMessage());
        }
        // open's options: weights converted at open, the decode copies (f32 weights copied as
        // stored: the same tokens, more bytes), a dtype the products do not take refused.
        DType[] dtypes = {null, null, DType.BF16};
        String[] runs = new String[3];
        for (int i = 0; i < 3; i++) {
            try (Model m = Model.open("tiny.gguf", dtypes[i], i == 1); Session s = m.newSession(0, DType.F32, 0)) {
                check(m.weightsDType == (dtypes[i] == null ? DType.F32 : dtypes[i]) && (m.repackedBytes > 0) == (i == 1),
                      "weights as asked");
                StringBuilder text = new StringBuilder();
                for (String piece : s.generate("abc ab", 8)) text.append(piece).append('|');
                runs[i] = text.toString();
            }
        }
        check(runs[0].equals(runs[1]) && !runs[2].isEmpty(), "repacked weights give the same tokens");
        try {
            Model.open("tiny.gguf", DType.I32, false);
            throw new AssertionError("i32 weights opened");
        } catch (TensorLifeException.DtypeException e) {
            check(e.getMessage().contains("i32"), e.getMessage());
        }
    }

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals("--bench")) {
            bench();
            return;
        }
        System.out.println("tensorlife " + Context.version() + " from Java " + System.getProperty("java.version"));
        test("decode loop scenario", TensorLifeTest::decodeLoop);
        test("misuse gives clear exceptions", TensorLifeTest::misuse);
        test("safetensors and JSON", TensorLifeTest::safetensorsAndJson);
        test("views, reductions and caches", TensorLifeTest::viewsReductionsAndCaches);
        test("dropped contexts are released", TensorLifeTest::droppedContexts);
        test("one context, many threads", TensorLifeTest::manyThreads);
        test("the whole API", TensorLifeTest::wholeApi);
        test("storage dtypes", TensorLifeTest::storageDtypes);
        test("GGUF metadata and tensors", TensorLifeTest::gguf);
        test("RoPE, grouped-query attention, an f16 cache", TensorLifeTest::llamaOps);
        test("models and sessions: text in, text out", TensorLifeTest::modelsAndSessions);
        System.out.println("java: " + passed + " passed, " + failed + " failed");
        System.exit(failed == 0 && passed > 0 ? 0 : 1);
    }
}
