// A 16-float add through C# (P/Invoke on .NET) against the same adds made from C in one call,
// and a P/Invoke that does nothing: the part of the crossing no binding can remove.
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Running;
using BenchmarkDotNet.Toolchains.InProcess.Emit;
using TensorLife;

public class Add16 {
    const int N = 4096;  // adds per invocation; the scope is reset every 256, as the C loop does
    Context ctx;
    Scope scope;
    Tensor a, b;

    [GlobalSetup]
    public void Setup() {
        ctx = new Context();
        a = ctx.FromFloats(new long[] { 16 }, new float[16]);
        b = ctx.FromFloats(new long[] { 16 }, new float[16]);
        scope = ctx.OpenScope("bench", 1 << 16);
    }

    [GlobalCleanup]
    public void Cleanup() { scope.Dispose(); ctx.Dispose(); }

    [Benchmark(Baseline = true, OperationsPerInvoke = N, Description = "add from C")]
    public void FromC() => BenchBaseline.PerAddFromC(ctx, scope, a, b, N);

    [Benchmark(OperationsPerInvoke = N, Description = "add from C#")]
    public void FromCSharp() {
        for (int i = 0; i < N; i++) {
            ctx.Add(a, b);
            if ((i & 255) == 255) scope.Reset();
        }
    }

    // The runtime's own floor: a P/Invoke that does nothing (the ABI version), N times.
    [Benchmark(OperationsPerInvoke = N, Description = "trivial P/Invoke")]
    public int TrivialPInvoke() {
        int sum = 0;
        for (int i = 0; i < N; i++) sum += Context.AbiVersion;
        return sum;
    }

    // In process (the package is this project's reference; a generated project would not see the
    // feed), 15 measured iterations after 5 warm-up ones (a short run's 3 let one slow iteration
    // of the C loop move its mean by half), min/median/max beside the mean, files under the
    // system's temporary folder.
    public static void Main(string[] args) {
        var job = Job.Default.WithWarmupCount(5).WithIterationCount(15).WithToolchain(InProcessEmitToolchain.Instance);
        var config = DefaultConfig.Instance.AddJob(job)
                         .AddColumn(StatisticColumn.Min, StatisticColumn.Median, StatisticColumn.Max)
                         .WithArtifactsPath(System.IO.Path.Combine(System.IO.Path.GetTempPath(), "tensorlife-bdn"));
        BenchmarkRunner.Run<Add16>(config, args);
    }
}
