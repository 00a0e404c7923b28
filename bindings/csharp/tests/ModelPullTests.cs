// model/pull through the library: a download from the loopback hub CSharpBindingIT starts (HF_ENDPOINT, with an empty
// OAM_MODEL_CACHE of its own), its progress through IProgress, then the pulled name as a llama session's model.
using System;
using System.Collections.Generic;
using System.Linq;

namespace OpenAppleModels.Tests
{
    public static class ModelPullTests
    {
        private const string Name = "hf:owner/repo/csharp-tiny.gguf";

        private sealed class Recorder : IProgress<OamPullProgress>
        {
            public readonly List<OamPullProgress> Seen = new List<OamPullProgress>();

            public void Report(OamPullProgress value)
            {
                lock (Seen) Seen.Add(value);
            }
        }

        [Test]
        public static void APullReportsProgressThroughIProgressAndThePulledNameRuns()
        {
            if (string.IsNullOrEmpty(Environment.GetEnvironmentVariable("HF_ENDPOINT")))
                throw new InvalidOperationException("HF_ENDPOINT is not set: CSharpBindingIT starts the hub and sets it");
            using (var bridge = new OamBridge())
            {
                var uncached = MainThread.Run(() => Check.ThrowsAsync<OamException>(
                    () => bridge.CreateSessionAsync(model: J.O("type", "llama", "path", Name)), "an uncached name"), bridge);
                Check.Equal(-32602, uncached.Code);
                Check.True(uncached.Message.Contains("model/pull"), "the error names model/pull: " + uncached.Message);

                var missing = MainThread.Run(() => Check.ThrowsAsync<OamException>(
                    () => bridge.PullModelAsync("hf:owner/repo/absent.gguf"), "a missing file"), bridge);
                Check.Equal(-32060, missing.Code);
                Check.Equal("not_found", missing.ErrorData["reason"]);

                var progress = new Recorder();
                var result = MainThread.Run(() => bridge.PullModelAsync(Name, progress), bridge);
                Check.Equal(Name, result["model"]);
                Check.Equal(true, result["downloaded"]);
                long size = OpenAppleModels.Json.ToLong(result["bytes"]);
                Check.True(progress.Seen.Count > 0, "progress was reported");
                var last = progress.Seen.Last();
                Check.Equal(size, last.BytesDone);
                Check.Equal(size, last.BytesTotal);
                Check.Equal(1.0, last.Fraction);
                Check.Equal(false, MainThread.Run(() => bridge.CancelPullAsync(Name), bridge));

                var answer = MainThread.Run(async () =>
                {
                    var session = await bridge.CreateSessionAsync(options: J.O("maxResponseTokens", 4),
                        model: J.O("type", "llama", "path", Name));
                    return await session.RespondAsync("Hello");
                }, bridge);
                Check.True(answer["text"] is string, "the pulled model answered");
            }
        }
    }
}
