package org.tensorlife;

/** How the next token is chosen (tl_sampler): temperature 0 is greedy; topK 0, topP 1, minP 0 and
 *  repeatPenalty 1 are off.  The same seed gives the same tokens in every binding. */
public record Sampler(float temperature, int topK, float topP, float minP, float repeatPenalty, int repeatLastN, long seed) {
    public static Sampler greedy() { return new Sampler(0f, 0, 1f, 0f, 1f, 64, 0); }
    /** temperature and seed, the rest off. */
    public static Sampler of(float temperature, long seed) { return new Sampler(temperature, 0, 1f, 0f, 1f, 64, seed); }

    double[] numbers() { return new double[] {temperature, topP, minP, repeatPenalty}; }
    long[] integers() { return new long[] {topK, repeatLastN, 0, 0}; }
}
