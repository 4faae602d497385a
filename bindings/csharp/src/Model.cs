// Text in, text out: a Llama model (GGUF, or a Hugging Face folder) and its sessions.
//   using var model = Model.Open(path);
//   using var chat = model.NewSession();
//   foreach (var piece in chat.Generate(prompt, maxTokens: 64)) Console.Write(piece);
// The model's weights are shared, read-only and not copied, by its sessions; each Session holds
// its own KV cache and sampler state and may run on its own thread.  Generate yields whole UTF-8
// characters.  The same seed gives the same tokens in every binding and on every machine.
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using R = TensorLife.Raw.tensorlife;

namespace TensorLife {

/// The model record: released once (Dispose or when collected); the model itself closes when its
/// last session has too (the runtime counts them).
sealed class ModelHandle : SafeHandle {
    internal ModelHandle(ulong m) : base(IntPtr.Zero, true) { SetHandle((IntPtr)(long)m); }
    public override bool IsInvalid => handle == IntPtr.Zero;
    internal ulong M => IsClosed ? 0 : (ulong)(long)handle;
    protected override bool ReleaseHandle() { R.tlb_model_release((ulong)(long)handle); return true; }
}

sealed class SessionHandle : SafeHandle {
    internal SessionHandle(ulong s) : base(IntPtr.Zero, true) { SetHandle((IntPtr)(long)s); }
    public override bool IsInvalid => handle == IntPtr.Zero;
    internal ulong S => IsClosed ? 0 : (ulong)(long)handle;
    protected override bool ReleaseHandle() { R.tlb_session_close((ulong)(long)handle); return true; }
}

/// How the next token is chosen (tl_sampler): Temperature 0 is greedy; TopK 0, TopP 1, MinP 0 and
/// RepeatPenalty 1 are off.
public sealed class Sampler {
    public float Temperature { get; set; }
    public int TopK { get; set; }
    public float TopP { get; set; } = 1f;
    public float MinP { get; set; }
    public float RepeatPenalty { get; set; } = 1f;
    public int RepeatLastN { get; set; } = 64;
    public ulong Seed { get; set; }
    public static Sampler Greedy => new Sampler();
    internal double[] Numbers() => new double[] { Temperature, TopP, MinP, RepeatPenalty };
    internal long[] Integers() => new long[] { TopK, RepeatLastN, 0, 0 };
}

public sealed class Model : IDisposable {
    readonly ContextHandle record;  // where the model's calls record their failures
    internal readonly ulong c;
    readonly ModelHandle h;

    public int VocabSize { get; }
    public int DModel { get; }
    public int Layers { get; }
    public int Heads { get; }
    public int KvHeads { get; }
    public int ContextLength { get; }
    public DType WeightsDType { get; }
    /// The BOS and EOS ids, -1 where the vocabulary has none.
    public int Bos { get; }
    public int Eos { get; }
    public bool HasVocabulary { get; }
    /// The bytes the decode copies took (Open's repack; 0: none).
    public long RepackedBytes { get; }

    Model(string path, DType? weightsDType, bool repack) {
        ulong r = R.tlb_context_new();
        if (r == 0) throw TensorLifeException.Of(R.tlb_status(0), R.tlb_message(0));
        record = new ContextHandle(r);
        c = r;
        ulong m = R.tlb_model_open_with(c, Context.Name("path", path), weightsDType.HasValue ? (int)weightsDType.Value : 0,
                                        repack ? 1 : 0);
        if (m == 0) throw Failure();
        h = new ModelHandle(m);
        var info = new long[14];
        Check(R.tlb_model_info(c, m, info, (uint)info.Length));
        VocabSize = (int)info[0]; DModel = (int)info[1]; Layers = (int)info[2]; Heads = (int)info[3];
        KvHeads = (int)info[4]; ContextLength = (int)info[6]; WeightsDType = (DType)info[7];
        Bos = (int)info[8]; Eos = (int)info[9]; HasVocabulary = info[12] != 0; RepackedBytes = info[13];
    }

    /// A GGUF file (known by its magic, whatever its name), or a folder (or its
    /// model.safetensors) holding a Hugging Face Llama.  weightsDType converts the projections,
    /// head and embedding at open (null: as the file stores them); repack also lays q4_0, q8_0,
    /// q4_K, q5_K and q6_K weights out for decode and copies the file's other projections as stored
    /// (the same numbers, faster single tokens, RepackedBytes more memory).
    public static Model Open(string path, DType? weightsDType = null, bool repack = false) =>
        new Model(path, weightsDType, repack);

    /// Releases the model; its open sessions keep its weights until they are disposed.
    public void Dispose() { h.Dispose(); GC.KeepAlive(record); }

    internal TensorLifeException Failure() => TensorLifeException.Of(R.tlb_status(c), R.tlb_message(c));
    internal void Check(int status) { if (status != 0) throw Failure(); GC.KeepAlive(record); }
    internal ulong Open() {
        ulong m = h.M;
        if (m == 0) throw TensorLifeException.Of(-2, "the model is closed");
        return m;
    }

    public int[] Tokenize(string text, bool addSpecial = true, bool parseSpecial = false) {
        int flags = (addSpecial ? 1 : 0) | (parseSpecial ? 2 : 0);
        text = Context.Name("text", text);
        var ids = new int[System.Text.Encoding.UTF8.GetByteCount(text) * 3 + 8];
        long n = R.tlb_tokenize(c, Open(), text, flags, ids, (uint)ids.Length);
        if (n < 0) throw Failure();
        Array.Resize(ref ids, (int)n);
        return ids;
    }

    public string Detokenize(int[] ids, bool removeSpecial = false, bool unparseSpecial = false) {
        int flags = (removeSpecial ? 1 : 0) | (unparseSpecial ? 2 : 0);
        string s = R.tlb_detokenize(c, Open(), ids, (uint)ids.Length, flags);
        if (s == null) throw Failure();
        return s;
    }

    /// A session with its own KV cache (F32, F16 or BF16) of contextLength tokens (0: the
    /// model's, at most 4096); prompts run as batches of at most maxChunk tokens (0: 64).
    public Session NewSession(int contextLength = 0, DType kvDType = DType.F32, int maxChunk = 0) =>
        new Session(this, contextLength, kvDType, maxChunk);
}

public sealed class Session : IDisposable {
    readonly Model model;  // the model object lives at least as long as its sessions
    readonly SessionHandle h;

    internal Session(Model model, int contextLength, DType kvDType, int maxChunk) {
        this.model = model;
        ulong s = R.tlb_session_open(model.c, model.Open(), contextLength, (int)kvDType, maxChunk);
        if (s == 0) throw model.Failure();
        h = new SessionHandle(s);
    }

    public void Dispose() => h.Dispose();

    ulong Open() {
        ulong s = h.S;
        if (s == 0) throw TensorLifeException.Of(-2, "the session is closed");
        return s;
    }

    /// Tokens fed so far.
    public int Position => h.IsClosed ? 0 : (int)R.tlb_session_position(h.S);

    public void Feed(int[] ids) => model.Check(R.tlb_session_feed(model.c, Open(), ids, (uint)ids.Length));
    public void FeedText(string text, bool addSpecial = true, bool parseSpecial = false) =>
        model.Check(R.tlb_session_feed_text(model.c, Open(), Context.Name("text", text), (addSpecial ? 1 : 0) | (parseSpecial ? 2 : 0)));
    /// Keeps the first `keep` tokens, forgets the rest.
    public void Rewind(int keep) => model.Check(R.tlb_session_rewind(model.c, Open(), keep));

    /// The next token id (not fed).
    public int Sample(Sampler sampler = null) {
        sampler = sampler ?? Sampler.Greedy;
        var ints = sampler.Integers();
        long t = R.tlb_session_sample(model.c, Open(), sampler.Numbers(), 4, ints, (uint)ints.Length, sampler.Seed);
        if (t < 0) throw model.Failure();
        return (int)t;
    }

    /// One token of generation: its text (whole characters), and whether it ended generation (then
    /// it was not fed).
    public string Step(Sampler sampler, out int token, out bool done) {
        var ints = sampler.Integers();
        string text = R.tlb_session_generate(model.c, Open(), sampler.Numbers(), 4, ints, (uint)ints.Length, sampler.Seed);
        if (text == null) throw model.Failure();
        token = (int)ints[2];
        done = ints[3] != 0;
        return text;
    }

    /// Feeds prompt (with BOS as the vocabulary asks) when given, then yields the text of each
    /// generated token until maxTokens or a token that ends generation.
    public IEnumerable<string> Generate(string prompt, int maxTokens = 64, Sampler sampler = null) {
        if (prompt != null) FeedText(prompt);
        return Pieces(maxTokens, sampler ?? Sampler.Greedy);
    }

    IEnumerable<string> Pieces(int maxTokens, Sampler sampler) {
        for (int i = 0; i < maxTokens; i++) {
            string text = Step(sampler, out _, out bool done);
            if (done) yield break;
            yield return text;
        }
    }
}

}  // namespace TensorLife
