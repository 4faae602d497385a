// Each case of the C# suite (../test/Test.cs, which Mono runs as Test.exe) as an xunit fact.
using Xunit;

public class TensorLifeFacts {
    [Fact] public void DecodeLoopScenario() => Test.DecodeLoop();
    [Fact] public void MisuseGivesClearExceptions() => Test.Misuse();
    [Fact] public void SafetensorsAndJson() => Test.SafetensorsAndJson();
    [Fact] public void ViewsReductionsAndCaches() => Test.ViewsReductionsAndCaches();
    [Fact] public void DroppedContextsAreReleased() => Test.DroppedContexts();
    [Fact] public void DroppedScopesAreClosed() => Test.DroppedScopes();
    [Fact] public void OneContextManyThreads() => Test.ManyThreads();
    [Fact] public void TheWholeApi() => Test.WholeApi();
    [Fact] public void StorageDtypes() => Test.StorageDtypes();
    [Fact] public void GgufMetadataAndTensors() => Test.Gguf();
    [Fact] public void RopeGroupedQueryAttentionHalfCache() => Test.LlamaOps();
    [Fact] public void ExceptionNamesBesideSystems() => Test.ExceptionNames();
    [Fact] public void ModelsAndSessions() => Test.ModelAndSessions();
}
