package org.tensorlife;

import java.lang.ref.Cleaner;
import java.nio.charset.StandardCharsets;
import org.tensorlife.raw.tensorlife;

/** A Llama model (GGUF, or a Hugging Face folder), text in and text out:
 *  <pre>{@code
 *  try (Model m = Model.open(path); Session s = m.newSession()) {
 *      for (String piece : s.generate(prompt, 64)) System.out.print(piece);
 *  }}</pre>
 *  Its weights are shared, read-only and not copied, by its sessions; closing the model leaves
 *  its open sessions working until they are closed.  Failures throw the TensorLifeException of
 *  their status with the library's message. */
public final class Model implements AutoCloseable {
    static { Native.ensureLoaded(); }

    final long c;  // the record the model's calls report their failures on
    private final long m;
    private final Cleaner.Cleanable cleanable;
    private volatile boolean closed;
    public final int vocabSize, dModel, layers, heads, kvHeads, contextLength, bos, eos;
    public final DType weightsDType;
    public final boolean hasVocabulary;
    /** The bytes the decode copies took (open's repack; 0: none). */
    public final long repackedBytes;

    private Model(String path, DType convertTo, boolean repack) {
        long record = tensorlife.tlb_context_new();
        if (record == 0) throw TensorLifeException.of(tensorlife.tlb_status(0), tensorlife.tlb_message(0));
        c = record;
        long opened = tensorlife.tlb_model_open_with(c, Context.name("path", path),
                                                     convertTo == null ? 0 : convertTo.code, repack ? 1 : 0);
        if (opened == 0) {
            TensorLifeException e = failure();
            tensorlife.tlb_context_release(record);
            throw e;
        }
        m = opened;
        // The record outlives close(): sessions report their failures on it until the last of
        // them (each holds this Model) is collected.
        Context.CLEANER.register(this, () -> tensorlife.tlb_context_release(record));
        cleanable = Context.CLEANER.register(this, () -> tensorlife.tlb_model_release(opened));
        long[] info = new long[14];
        check(tensorlife.tlb_model_info(c, m, info));
        vocabSize = (int) info[0]; dModel = (int) info[1]; layers = (int) info[2]; heads = (int) info[3];
        kvHeads = (int) info[4]; contextLength = (int) info[6]; weightsDType = DType.of((int) info[7]);
        bos = (int) info[8]; eos = (int) info[9]; hasVocabulary = info[12] != 0; repackedBytes = info[13];
    }

    /** A GGUF file (known by its magic, whatever its name), or a folder (or its model.safetensors)
     *  holding a Hugging Face Llama. */
    public static Model open(String path) { return new Model(path, null, false); }

    /** As open(path), with the weights converted to convertTo at open (null: as the file stores
     *  them) and, with repack, q4_0, q8_0, q4_K, q5_K and q6_K weights also laid out for decode, the
     *  file's other projections copied as stored (the same numbers, faster single tokens,
     *  repackedBytes more memory). */
    public static Model open(String path, DType convertTo, boolean repack) { return new Model(path, convertTo, repack); }

    @Override
    public void close() {
        closed = true;
        cleanable.clean();  // once; the sessions still open keep the weights
    }

    TensorLifeException failure() { return TensorLifeException.of(tensorlife.tlb_status(c), tensorlife.tlb_message(c)); }
    void check(int status) { if (status != 0) throw failure(); }
    long open() {
        if (closed) throw new TensorLifeException.InvalidHandleException("the model is closed");
        return m;
    }

    public int[] tokenize(String text, boolean addSpecial, boolean parseSpecial) {
        int flags = (addSpecial ? 1 : 0) | (parseSpecial ? 2 : 0);
        text = Context.name("text", text);
        int[] ids = new int[text.getBytes(StandardCharsets.UTF_8).length * 3 + 8];
        long n = tensorlife.tlb_tokenize(c, open(), text, flags, ids);
        if (n < 0) throw failure();
        return java.util.Arrays.copyOf(ids, (int) n);
    }
    public int[] tokenize(String text) { return tokenize(text, true, false); }

    public String detokenize(int[] ids, boolean removeSpecial, boolean unparseSpecial) {
        String s = tensorlife.tlb_detokenize(c, open(), ids, (removeSpecial ? 1 : 0) | (unparseSpecial ? 2 : 0));
        if (s == null) throw failure();
        return s;
    }
    public String detokenize(int[] ids) { return detokenize(ids, false, false); }

    /** A session with its own KV cache (F32, F16 or BF16) of contextLength tokens (0: the model's,
     *  at most 4096); prompts run as batches of at most maxChunk tokens (0: 64). */
    public Session newSession(int contextLength, DType kvDType, int maxChunk) {
        return new Session(this, contextLength, kvDType, maxChunk);
    }
    public Session newSession() { return newSession(0, DType.F32, 0); }
}
