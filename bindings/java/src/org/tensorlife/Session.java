package org.tensorlife;

import java.lang.ref.Cleaner;
import java.util.Iterator;
import java.util.NoSuchElementException;
import org.tensorlife.raw.tensorlife;

/** A conversation with a model: its own KV cache and sampler state (one thread at a time).
 *  feed ids or text, sample or generate, rewind to a kept prefix; close() frees its cache. */
public final class Session implements AutoCloseable {
    private final Model model;  // lives at least as long as its sessions
    private final long s;
    private final Cleaner.Cleanable cleanable;
    private volatile boolean closed;

    Session(Model model, int contextLength, DType kvDType, int maxChunk) {
        this.model = model;
        long opened = tensorlife.tlb_session_open(model.c, model.open(), contextLength, kvDType.code, maxChunk);
        if (opened == 0) throw model.failure();
        s = opened;
        cleanable = Context.CLEANER.register(this, () -> tensorlife.tlb_session_close(opened));
    }

    @Override
    public void close() {
        closed = true;
        cleanable.clean();
    }

    private long open() {
        if (closed) throw new TensorLifeException.InvalidHandleException("the session is closed");
        return s;
    }

    /** Tokens fed so far. */
    public int position() { return closed ? 0 : (int) tensorlife.tlb_session_position(s); }
    public void feed(int... ids) { model.check(tensorlife.tlb_session_feed(model.c, open(), ids)); }
    public void feedText(String text, boolean addSpecial, boolean parseSpecial) {
        model.check(tensorlife.tlb_session_feed_text(model.c, open(), Context.name("text", text),
                                                     (addSpecial ? 1 : 0) | (parseSpecial ? 2 : 0)));
    }
    public void feedText(String text) { feedText(text, true, false); }
    /** Keeps the first {@code keep} tokens and forgets the rest. */
    public void rewind(int keep) { model.check(tensorlife.tlb_session_rewind(model.c, open(), keep)); }

    /** The next token id (not fed). */
    public int sample(Sampler p) {
        long t = tensorlife.tlb_session_sample(model.c, open(), p.numbers(), p.integers(), p.seed());
        if (t < 0) throw model.failure();
        return (int) t;
    }

    /** One token of generation: its text as whole characters; {@code null} when the token ended
     *  generation (it is not fed then). */
    public String step(Sampler p) {
        long[] info = p.integers();
        String text = tensorlife.tlb_session_generate(model.c, open(), p.numbers(), info, p.seed());
        if (text == null) throw model.failure();
        return info[3] != 0 ? null : text;
    }

    /** Feeds prompt (when not null) and yields the text of each generated token, until maxTokens
     *  or a token that ends generation. */
    public Iterable<String> generate(String prompt, int maxTokens, Sampler p) {
        if (prompt != null) feedText(prompt);
        return () -> new Iterator<String>() {
            int made;
            String next;
            boolean ended;

            @Override public boolean hasNext() {
                if (next == null && !ended && made < maxTokens) {
                    next = step(p);
                    made++;
                    ended = next == null;
                }
                return next != null;
            }

            @Override public String next() {
                if (!hasNext()) throw new NoSuchElementException();
                String out = next;
                next = null;
                return out;
            }
        };
    }
    public Iterable<String> generate(String prompt, int maxTokens) { return generate(prompt, maxTokens, Sampler.greedy()); }
}
