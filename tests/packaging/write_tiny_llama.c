/* Writes tests/tiny_llama.h's model (a random Llama with a SentencePiece vocabulary, 271 tokens)
 * to the path given: the bindings' tests and consumers open it, and compare what they generate
 * with the C API's tokens on it (tests/llamacpp/runner). */
#include <stdio.h>

#include "../tiny_llama.h"
#include "usage.h"

int main(int argc, char **argv) {
    answer_help(argc, argv, "usage: write_tiny_llama OUT.gguf\n");
    if (argc != 2) return fputs("usage: write_tiny_llama OUT.gguf\n", stderr), 2;
    if (write_tiny_llama(argv[1], "llama", 32)) return perror(argv[1]), 1;
    return 0;
}
