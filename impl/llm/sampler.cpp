// Choosing the next token from a session's logits, in llama.cpp's order: repetition penalty,
// then greedy, or top-k, top-p, min-p, temperature and a draw.  Orders are total (logit, then
// id) and the draw's number comes from splitmix64 of (seed, draw counter), so the same seed
// gives the same tokens everywhere; no allocation (the candidates' room is the session's).
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "llm/session.h"

namespace tl {

namespace {

uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

bool before(const Candidate &a, const Candidate &b) { return a.logit > b.logit || (a.logit == b.logit && a.id < b.id); }

// Probabilities of the first n candidates (sorted) from their logits over temperature t.
void softmax(Candidate *c, size_t n, double t) {
    const double top = double(c[0].logit) / t;
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += c[i].p = std::exp(double(c[i].logit) / t - top);
    for (size_t i = 0; i < n; ++i) c[i].p /= sum;
}

}  // namespace

tl_status session_sample(tl_session *s, const tl_sampler &p, int32_t *token) {
    if (!s->have_logits) return no_logits(s);
    if (!(p.temperature == p.temperature) || !(p.top_p == p.top_p) || !(p.min_p == p.min_p) || !(p.repeat_penalty > 0))
        return fail(TL_E_INVALID_ARGUMENT, "sampler: temperature, top_p, min_p NaN or repeat_penalty <= 0");
    const int32_t vocab = int32_t(s->logits.size());
    s->candidates.resize(size_t(vocab));
    Candidate *c = s->candidates.data();
    for (int32_t i = 0; i < vocab; ++i) c[i] = {i, s->logits[size_t(i)], 0.0};
    if (p.repeat_penalty != 1.0f && p.repeat_last_n != 0) {
        const size_t h = s->history.size();
        const size_t first = p.repeat_last_n < 0 || size_t(p.repeat_last_n) >= h ? 0 : h - size_t(p.repeat_last_n);
        for (size_t i = first; i < h; ++i) {
            const int32_t id = s->history[i];
            if (s->seen[size_t(id)]) continue;
            s->seen[size_t(id)] = 1;
            c[id].logit = c[id].logit > 0 ? c[id].logit / p.repeat_penalty : c[id].logit * p.repeat_penalty;
        }
        for (size_t i = first; i < h; ++i) s->seen[size_t(s->history[i])] = 0;
    }
    const uint64_t draw = s->draws++;
    if (p.temperature <= 0) {
        *token = std::min_element(c, c + vocab, before)->id;
        return TL_OK;
    }
    size_t n = size_t(vocab);
    if (p.top_k > 0 && size_t(p.top_k) < n) {
        std::nth_element(c, c + p.top_k, c + n, before);
        n = size_t(p.top_k);
    }
    std::sort(c, c + n, before);
    softmax(c, n, 1.0);
    if (p.top_p < 1.0f) {
        double sum = 0;
        size_t keep = 0;
        while (keep < n && sum < double(p.top_p)) sum += c[keep++].p;
        n = std::max<size_t>(keep, 1);
    }
    if (p.min_p > 0.0f) {
        const double floor = c[0].p * double(p.min_p);
        size_t keep = 1;
        while (keep < n && c[keep].p >= floor) ++keep;
        n = keep;
    }
    softmax(c, n, double(p.temperature));
    const double u = double(splitmix64(p.seed ^ splitmix64(draw)) >> 11) * 0x1.0p-53;
    double sum = 0;
    for (size_t i = 0; i < n; ++i) {
        sum += c[i].p;
        if (u < sum) {
            *token = c[i].id;
            return TL_OK;
        }
    }
    *token = c[n - 1].id;
    return TL_OK;
}

}  // namespace tl
