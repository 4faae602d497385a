// n deterministic pseudo-random floats in [-1, 1) from seed: the internal tests' weights and
// activations.
#pragma once
#include <random>
#include <vector>

inline std::vector<float> random_values(size_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float &x : v) x = u(gen);
    return v;
}
