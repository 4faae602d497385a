// llama.cpp (LLamaSharp 0.30.0's natives) as a reference, from the command line:
//   tokenize MODEL CORPUS.jsonl [--add-special] [--parse-special]
//       each line of CORPUS a JSON string; prints one JSON line a text: {"ids":[...],"text":"..."}
//       (text: llama_detokenize of the ids, with unparse_special as --parse-special)
//   generate MODEL --prompt-ids 1,2,3 --tokens N [--threads T] [--teacher 4,5,6] [--logits FILE]
//            [--chunk N] [--no-repack]
//       greedy decoding with an f32 KV cache and flash attention off; prints "tokens: ...",
//       "teacher: ..." (the argmax after each forced token) and "timing: prompt_ms per_token_ms";
//       --logits writes the logits after the prompt as raw f32; --chunk feeds the prompt N tokens a
//       batch; --no-repack keeps llama.cpp from repacking weights (use_extra_bufts off).
//   quantize SRC.gguf DST.gguf TYPE
//       llama.cpp's quantizer (no importance matrix), TYPE one of LLamaFtype's names without
//       MOSTLY_: Q4_K_M, Q5_K_M, Q6_K, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1.
// TL_LLAMACPP_AVX=avx2 (avx, none, avx512) picks the natives of that SIMD level.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Text;
using System.Text.Json;
using LLama.Native;

static unsafe class Reference {
    static readonly MethodInfo Tokenize = typeof(NativeApi).GetMethod("llama_tokenize", BindingFlags.NonPublic | BindingFlags.Static);
    static readonly MethodInfo Detokenize = typeof(NativeApi).GetMethod("llama_detokenize", BindingFlags.NonPublic | BindingFlags.Static);

    static IntPtr VocabOf(SafeLlamaModelHandle model) {
        var vocab = model.Vocab;
        var prop = vocab.GetType().GetProperty("VocabNative", BindingFlags.NonPublic | BindingFlags.Public | BindingFlags.Instance);
        return (IntPtr)Pointer.Unbox(prop.GetValue(vocab));
    }

    static int[] TokenizeBytes(IntPtr vocab, byte[] text, bool addSpecial, bool parseSpecial) {
        var ids = new int[text.Length * 3 + 8];
        fixed (byte* t = text) fixed (int* o = ids) {
            var vt = Tokenize.GetParameters()[0].ParameterType;
            var n = (int)Tokenize.Invoke(null, new object[] { Pointer.Box((void*)vocab, vt), Pointer.Box(t, typeof(byte*)),
                text.Length, Pointer.Box(o, Tokenize.GetParameters()[3].ParameterType), ids.Length, addSpecial, parseSpecial });
            if (n < 0) throw new Exception("llama_tokenize: " + n);
            return ids.Take(n).ToArray();
        }
    }

    static byte[] DetokenizeIds(IntPtr vocab, int[] ids, bool removeSpecial, bool unparseSpecial) {
        var buf = new byte[ids.Length * 64 + 64];
        fixed (int* i = ids) fixed (byte* b = buf) {
            var p = Detokenize.GetParameters();
            var n = (int)Detokenize.Invoke(null, new object[] { Pointer.Box((void*)vocab, p[0].ParameterType),
                Pointer.Box(i, p[1].ParameterType), ids.Length, Pointer.Box(b, typeof(byte*)), buf.Length, removeSpecial, unparseSpecial });
            if (n < 0) throw new Exception("llama_detokenize: " + n);
            return buf.Take(n).ToArray();
        }
    }

    // extraBuffers false: no CPU_REPACK copy, every product through the ggml_vec_dot kernels.
    static SafeLlamaModelHandle Load(string path, bool vocabOnly, bool extraBuffers = true) {
        NativeApi.llama_empty_call();
        var p = LLamaModelParams.Default();
        p.vocab_only = vocabOnly;
        p.use_extra_bufts = extraBuffers;
        return SafeLlamaModelHandle.LoadFromFile(path, p);
    }

    static string Option(string[] args, string name, string fallback = null) {
        int i = Array.IndexOf(args, name);
        return i >= 0 && i + 1 < args.Length ? args[i + 1] : fallback;
    }

    static int[] Ids(string s) => string.IsNullOrEmpty(s) ? new int[0] : s.Split(',').Select(int.Parse).ToArray();

    static int RunTokenize(string[] args) {
        bool add = args.Contains("--add-special"), parse = args.Contains("--parse-special");
        using var model = Load(args[1], true);
        var vocab = VocabOf(model);
        var output = new StringBuilder();
        foreach (var line in File.ReadAllLines(args[2])) {
            if (line.Length == 0) continue;
            var text = Encoding.UTF8.GetBytes(JsonSerializer.Deserialize<string>(line));
            var ids = TokenizeBytes(vocab, text, add, parse);
            var back = DetokenizeIds(vocab, ids, false, parse);
            output.Append("{\"ids\":[").Append(string.Join(",", ids)).Append("],\"text\":")
                  .Append(JsonSerializer.Serialize(Encoding.UTF8.GetString(back))).Append("}\n");
        }
        Console.Out.Write(output.ToString());
        return 0;
    }

    static int Argmax(Span<float> logits, int n) {
        int best = 0;
        for (int i = 1; i < n; ++i) if (logits[i] > logits[best]) best = i;
        return best;
    }

    static int RunGenerate(string[] args) {
        var prompt = Ids(Option(args, "--prompt-ids"));
        var teacher = Ids(Option(args, "--teacher"));
        int tokens = int.Parse(Option(args, "--tokens", "16")), threads = int.Parse(Option(args, "--threads", "1"));
        using var model = Load(args[1], false, !args.Contains("--no-repack"));
        var cp = LLamaContextParams.Default();
        cp.n_ctx = (uint)Math.Max(64, prompt.Length + tokens + teacher.Length + 8);
        cp.n_batch = cp.n_ubatch = (uint)Math.Max(512, prompt.Length);
        cp.n_threads = cp.n_threads_batch = threads;
        cp.type_k = GGMLType.GGML_TYPE_F32;
        cp.type_v = GGMLType.GGML_TYPE_F32;
        cp.llama_flash_attn_type = LLamaFlashAttentionType.LLAMA_FLASH_ATTENTION_TYPE_DISABLED;
        using var ctx = SafeLLamaContextHandle.Create(model, cp);
        int nVocab = model.Vocab.Count;
        var batch = new LLamaBatch();
        var watch = Stopwatch.StartNew();
        int chunk = int.Parse(Option(args, "--chunk", "0"));  // the prompt in batches of this many tokens (0: one batch)
        if (chunk <= 0) chunk = Math.Max(1, prompt.Length);
        for (int start = 0; start < prompt.Length; start += chunk) {
            batch.Clear();
            for (int i = start; i < Math.Min(prompt.Length, start + chunk); ++i)
                batch.Add((LLamaToken)(prompt[i]), i, LLamaSeqId.Zero, i == prompt.Length - 1);
            if (ctx.Decode(batch) != DecodeResult.Ok) throw new Exception("llama_decode failed on the prompt");
        }
        double promptMs = watch.Elapsed.TotalMilliseconds;
        var got = new List<int>();
        int pos = prompt.Length, next = Argmax(ctx.GetLogitsIth(batch.TokenCount - 1), nVocab);
        var logitsFile = Option(args, "--logits", "");  // the logits after the prompt, raw f32
        if (logitsFile != "")
            System.IO.File.WriteAllBytes(logitsFile, MemoryMarshal.AsBytes(ctx.GetLogitsIth(batch.TokenCount - 1).Slice(0, nVocab)).ToArray());
        watch.Restart();
        for (int k = 0; k < tokens; ++k) {
            got.Add(next);
            batch.Clear();
            batch.Add((LLamaToken)(next), pos++, LLamaSeqId.Zero, true);
            if (ctx.Decode(batch) != DecodeResult.Ok) throw new Exception("llama_decode failed");
            next = Argmax(ctx.GetLogitsIth(0), nVocab);
        }
        double perToken = watch.Elapsed.TotalMilliseconds / Math.Max(1, tokens);
        Console.WriteLine("tokens: " + string.Join(",", got));
        if (teacher.Length > 0) {  // a fresh context, each position fed the given token
            using var ctx2 = SafeLLamaContextHandle.Create(model, cp);
            var b2 = new LLamaBatch();
            for (int i = 0; i < prompt.Length; ++i) b2.Add((LLamaToken)(prompt[i]), i, LLamaSeqId.Zero, i == prompt.Length - 1);
            ctx2.Decode(b2);
            var forced = new List<int> { Argmax(ctx2.GetLogitsIth(b2.TokenCount - 1), nVocab) };
            for (int k = 0; k < teacher.Length - 1; ++k) {
                b2.Clear();
                b2.Add((LLamaToken)(teacher[k]), prompt.Length + k, LLamaSeqId.Zero, true);
                ctx2.Decode(b2);
                forced.Add(Argmax(ctx2.GetLogitsIth(0), nVocab));
            }
            Console.WriteLine("teacher: " + string.Join(",", forced));
        }
        Console.WriteLine($"timing: {promptMs:F3} {perToken:F4}");
        return 0;
    }

    static int RunQuantize(string[] args) {
        NativeApi.llama_empty_call();
        var type = (LLamaFtype)Enum.Parse(typeof(LLamaFtype), "MOSTLY_" + args[3]);
        return LLama.LLamaQuantizer.Quantize(args[1], args[2], type, 2, true, true) ? 0 : 1;
    }

    static int Main(string[] args) {
        // TL_LLAMACPP_AVX=avx2 (avx, none) loads the natives built for that level instead of the
        // machine's best: llama.cpp against itself on another SIMD width.
        var avx = Environment.GetEnvironmentVariable("TL_LLAMACPP_AVX");
        if (!string.IsNullOrEmpty(avx))
            NativeLibraryConfig.All.WithAvx(avx switch { "avx2" => AvxLevel.Avx2, "avx" => AvxLevel.Avx, "none" => AvxLevel.None,
                                                          _ => AvxLevel.Avx512 });
        if (args.Length >= 3 && args[0] == "tokenize") return RunTokenize(args);
        if (args.Length >= 2 && args[0] == "generate") return RunGenerate(args);
        if (args.Length == 4 && args[0] == "quantize") return RunQuantize(args);
        Console.Error.WriteLine("usage: tokenize MODEL CORPUS.jsonl [--add-special] [--parse-special] | generate MODEL --prompt-ids IDS --tokens N [--threads T] [--teacher IDS] [--logits FILE] [--chunk N] [--no-repack]");
        return 2;
    }
}
