// A consumer of the TensorLife NuGet package alone, text in and text out, as a C# user writes it
// (run with `dotnet run`, and published ahead of time: PublishAot).  Its arguments: the model
// (the C tests' tiny model) and the ids the C API drew from the same seed.
using System;
using System.Linq;
using System.Text;
using TensorLife;

var expected = args[1].Split(',').Select(int.Parse).ToArray();
using var model = Model.Open(args[0]);
using var chat = model.NewSession();
var text = new StringBuilder();
var sampler = new Sampler { Temperature = 0.9f, Seed = 5 };
foreach (var piece in chat.Generate("abc ab", maxTokens: expected.Length, sampler: sampler)) text.Append(piece);
using var again = model.NewSession();
again.FeedText("abc ab");
var ids = new int[expected.Length];
for (int i = 0; i < ids.Length; i++) {
    ids[i] = again.Sample(new Sampler { Temperature = 0.9f, Seed = 5 });
    again.Feed(new[] { ids[i] });
}
if (!ids.SequenceEqual(expected)) {
    Console.WriteLine($"tokens {string.Join(",", ids)}, the C API's {string.Join(",", expected)}");
    return 1;
}
try {
    chat.Feed(new[] { model.VocabSize });
    Console.WriteLine("an id past the vocabulary was fed");
    return 1;
} catch (InvalidArgumentException e) when (e.Message.Contains("not in the vocabulary")) {
}
Console.WriteLine($"csharp model ok: {ids.Length} tokens as the C API drew them, {text.Length} characters of text");
return 0;
