// Many threads at once, Dispose while work is in flight and from inside callbacks, create/dispose cycles, and the
// bad input that must end in a clear exception rather than a crash of the host.
using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using OpenAppleModels;

namespace OpenAppleModels.Tests
{
    public static class LifetimeTests
    {
        [Test]
        public static void EightThreadsAtOnceGetEveryAnswerExactlyOnce()
        {
            const int Threads = 8, Pings = 30, Blocking = 10, Turns = 5;
            var transport = new RecordingTransport(new NativeTransport());
            using (var bridge = new OamBridge(transport))
            {
                var toolThreads = new ConcurrentBag<bool>();
                bridge.RegisterTool("ring", "Ring the bell.", null, call =>
                {
                    toolThreads.Add(MainThread.IsCurrent);
                    return "ding " + call.Session;
                });
                for (int t = 0; t < Threads; t++)
                {
                    var steps = new List<object>();
                    for (int n = 0; n < Turns; n++)
                    {
                        steps.Add(J.ToolCallStep("ring"));
                        steps.Add(J.O("template", "{toolOutput}", "chunks", 2));
                    }
                    bridge.CallBlocking("session/create", J.O("session", "s" + t, "tools", bridge.ToolDefinitions("ring"),
                        "model", J.O("type", "scripted", "steps", steps)));
                }
                var completions = new ConcurrentDictionary<Task, int>();
                var blockingResults = new ConcurrentBag<object>();
                var turns = new ConcurrentBag<KeyValuePair<int, Task<object>>>();
                var failures = new ConcurrentBag<Exception>();
                var start = new Barrier(Threads);
                var randoms = new ConcurrentDictionary<int, Random>();
                Func<int, int> random = t => randoms.GetOrAdd(t, seed => new Random(7919 * (seed + 1))).Next();
                var all = new List<Task>();
                MainThread.Run(async () =>
                {
                    var workers = Enumerable.Range(0, Threads).Select(t => Task.Factory.StartNew(() =>
                    {
                        start.SignalAndWait();
                        var mine = new List<Task>();
                        var kinds = Enumerable.Repeat(0, Pings).Concat(Enumerable.Repeat(1, Blocking)).Concat(Enumerable.Repeat(2, Turns))
                            .OrderBy(k => random(t)).ToList(); // interleaved, the same way every run
                        foreach (var kind in kinds)
                        {
                            try
                            {
                                if (kind == 1)
                                {
                                    blockingResults.Add(bridge.CallBlocking("ping"));
                                    continue;
                                }
                                Task<object> task = kind == 2
                                    ? bridge.RequestAsync("session/respond", J.O("session", "s" + t, "prompt", "ring"))
                                    : bridge.RequestAsync("ping");
                                task.ContinueWith(done => completions.AddOrUpdate(done, 1, (k, v) => v + 1), TaskContinuationOptions.ExecuteSynchronously);
                                mine.Add(task);
                                if (kind == 2) turns.Add(new KeyValuePair<int, Task<object>>(t, task));
                            }
                            catch (Exception e)
                            {
                                failures.Add(e);
                            }
                        }
                        return mine;
                    }, TaskCreationOptions.LongRunning)).ToList();
                    foreach (var worker in workers) all.AddRange(await worker);
                    await Task.WhenAll(all);
                }, bridge);
                Check.Equal(0, failures.Count, "no request failed: " + string.Join("; ", failures.Select(f => f.Message)));
                Check.True(all.All(t => t.Status == TaskStatus.RanToCompletion), "every request completed");
                Check.True(completions.Values.All(v => v == 1) && completions.Count == all.Count, "each task completed once");
                Check.True(toolThreads.Count > 0 && toolThreads.All(x => x), "every tool call ran on the main thread");
                // On the wire: every request this binding sent got exactly one response.
                var requests = transport.SentMessages().Where(m => m.ContainsKey("id") && m.ContainsKey("method")).ToList();
                var sentIds = requests.Select(m => (string)m["id"]).ToList();
                var answered = transport.ReceivedMessages().Where(m => !m.ContainsKey("method") && m.ContainsKey("id"))
                    .GroupBy(m => m["id"] as string).ToDictionary(g => g.Key ?? "null", g => g.Count());
                Check.Equal(sentIds.Count, sentIds.Distinct().Count(), "ids are unique");
                Check.True(sentIds.All(id => answered.ContainsKey(id) && answered[id] == 1), "each id answered once");
                Check.Equal(sentIds.Count, answered.Count, "no response for an id nobody sent");
                Check.True(sentIds.All(id => id.StartsWith("cs-", StringComparison.Ordinal)), "ids are cs-<n>");
                Check.Equal(Threads * (Pings + Blocking + Turns), requests.Count(m => m["method"] as string != "session/create"), "every request was sent");
                Check.Equal(Threads * Blocking, blockingResults.Count(r => Check.Same(J.O(), r)), "every blocking ping answered {}");
                Check.Equal(Threads * Turns, turns.Count, "every turn was sent");
                Check.True(turns.All(pair => (string)J.Obj(pair.Value.Result)["text"] == "ding s" + pair.Key), "every turn rang its own session's bell");
                Check.Equal(0, bridge.PendingCount);
            }
        }

        [Test]
        public static void DisposeWithWorkInFlightFailsEverythingOnce()
        {
            var bridge = new OamBridge();
            ToolReply held = null;
            var cancelledOn = new List<string>();
            var entered = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            bridge.RegisterTool("hold", "Never answers.", null, (ToolCall call, ToolReply reply) =>
            {
                held = reply;
                reply.Cancelled += () => cancelledOn.Add(reply.CancelReason);
                entered.SetResult(true);
            });
            bridge.CallBlocking("session/create", J.O("session", "tool", "tools", bridge.ToolDefinitions("hold"),
                "model", J.Scripted(J.ToolCallStep("hold"), J.O("text", "never"))));
            bridge.CallBlocking("session/create", J.O("session", "slow", "model", J.Scripted(J.O("text", "never", "delayMs", 600000))));
            bridge.CallBlocking("session/create", J.O("session", "blocked", "model", J.Scripted(J.O("text", "never", "delayMs", 600000))));
            Exception blockedError = null, callbackError = null;
            int callbackCalls = 0;
            var blockedStarted = new ManualResetEventSlim();
            bridge.NotificationReceived += (method, p) => { if (method == "session/event" && Json.Field(p, "session") as string == "blocked") blockedStarted.Set(); };
            var blocked = new Thread(() =>
            {
                try
                {
                    bridge.CallBlocking("session/respond", J.O("session", "blocked", "prompt", "x", "stream", true), 0);
                }
                catch (Exception e)
                {
                    blockedError = e;
                }
            });
            MainThread.Run(async () =>
            {
                var toolTurn = bridge.Session("tool").RespondAsync("x");
                var slowTurn = bridge.Session("slow").RespondAsync("x");
                bridge.Request("session/respond", J.O("session", "slow", "prompt", "queued"), r => callbackCalls++, e => { callbackCalls++; callbackError = e; });
                await entered.Task;
                blocked.Start();
                await Task.Run(() => blockedStarted.Wait()); // in Pump mode the listener runs here: keep pumping
                await Task.Run(() => bridge.Dispose());      // from a worker thread
                Check.Equal("shut_down", (await Check.ThrowsAsync<OamException>(() => toolTurn, "the tool turn")).Name);
                Check.Equal("shut_down", (await Check.ThrowsAsync<OamException>(() => slowTurn, "the slow turn")).Name);
            }, bridge);
            Check.True(blocked.Join(Suite.WaitSeconds * 1000), "the blocked call returned");
            Check.Equal("cancelled", ((OamException)blockedError).Name);
            Check.Equal(1, callbackCalls, "the callback-style request failed once");
            Check.Equal("shut_down", ((OamException)callbackError).Name);
            Check.True(held.IsCancelled && cancelledOn.Count == 1, "the open tool call was cancelled once");
            Check.True(!held.Ok("late"), "a late answer is dropped");
            Check.Equal(0, bridge.PendingCount);
            Check.Equal(0, bridge.Pump(), "Pump after Dispose");
            bridge.Dispose(); // idempotent
            AssertSendsThrowShutDown(bridge);
        }

        private static void AssertSendsThrowShutDown(OamBridge bridge)
        {
            Check.Equal("shut_down", Check.Throws<OamException>(() => bridge.Notify("ping"), "Notify").Name);
            Check.Equal("shut_down", Check.Throws<OamException>(() => bridge.SendMessage(J.O("jsonrpc", "2.0", "method", "ping")), "SendMessage").Name);
            Check.Equal("shut_down", Check.Throws<OamException>(() => bridge.CallBlocking("ping"), "CallBlocking").Name);
            var late = bridge.RequestAsync("ping");
            Check.True(late.IsFaulted && ((OamException)late.Exception.InnerException).Name == "shut_down", "RequestAsync fails shut_down");
            Exception error = null;
            bridge.Request("ping", null, r => { }, e => error = e);
            Check.Equal("shut_down", ((OamException)error).Name);
            Check.True(bridge.IsDisposed, "IsDisposed");
        }

        [Test]
        public static void DisposeFromInsideACallback()
        {
            // On the bridge's own thread (dispatchOnCallbackThread), from a listener of the turn's first event.
            var inline = new OamBridge(dispatchOnCallbackThread: true);
            inline.CallBlocking("session/create", J.O("session", "s", "model", J.Scripted(J.O("text", "never", "delayMs", 600000))));
            var disposedOn = new TaskCompletionSource<int>();
            inline.NotificationReceived += (method, p) =>
            {
                inline.Dispose();
                disposedOn.TrySetResult(Thread.CurrentThread.ManagedThreadId);
            };
            var turn = inline.Session("s").RespondAsync("x", onEvent: e => { });
            Check.True(disposedOn.Task.Wait(Suite.WaitSeconds * 1000), "the listener ran and disposed");
            Check.True(disposedOn.Task.Result != Thread.CurrentThread.ManagedThreadId, "on the callback thread");
            Check.True(((IAsyncResult)turn).AsyncWaitHandle.WaitOne(Suite.WaitSeconds * 1000), "the turn ended");
            Check.Equal("shut_down", ((OamException)turn.Exception.InnerException).Name);
            AssertSendsThrowShutDown(inline);

            // On the callback thread while another thread waits in CallBlocking: Dispose wakes it and waits for it.
            var busy = new OamBridge(dispatchOnCallbackThread: true);
            busy.CallBlocking("session/create", J.O("session", "b", "model", J.Scripted(J.O("text", "never", "delayMs", 600000))));
            busy.CallBlocking("session/create", J.O("session", "t", "model", J.Scripted(J.O("text", "go", "chunks", 1))));
            Exception blockedError = null;
            var blockedStarted = new ManualResetEventSlim();
            busy.NotificationReceived += (method, p) =>
            {
                if (Json.Field(p, "session") as string == "b") blockedStarted.Set();
                if (Json.Field(p, "session") as string == "t") busy.Dispose();
            };
            var blocked = new Thread(() =>
            {
                try
                {
                    busy.CallBlocking("session/respond", J.O("session", "b", "prompt", "x", "stream", true), 0);
                }
                catch (Exception e)
                {
                    blockedError = e;
                }
            });
            blocked.Start();
            Check.True(blockedStarted.Wait(Suite.WaitSeconds * 1000), "the blocking turn started");
            var trigger = busy.Session("t").RespondAsync("x", onEvent: e => { });
            Check.True(blocked.Join(Suite.WaitSeconds * 1000), "the blocked call returned");
            Check.Equal("cancelled", ((OamException)blockedError).Name);
            Check.True(((IAsyncResult)trigger).AsyncWaitHandle.WaitOne(Suite.WaitSeconds * 1000), "the trigger turn ended");
            Check.Equal("shut_down", ((OamException)trigger.Exception.InnerException).Name);
            AssertSendsThrowShutDown(busy);

            // In Pump, from a tool handler: the reply it then sends is dropped.
            var pumped = new OamBridge();
            bool sent = true;
            pumped.RegisterTool("quit", "Quits the game.", null, (ToolCall call, ToolReply reply) =>
            {
                pumped.Dispose();
                sent = reply.Ok("bye");
            });
            var error = MainThread.Run(async () =>
            {
                var session = await pumped.CreateSessionAsync(tools: new object[] { "quit" }, model: J.Scripted(J.ToolCallStep("quit"), J.O("text", "after")));
                return await Check.ThrowsAsync<OamException>(() => session.RespondAsync("x"), "the turn");
            }, pumped);
            Check.Equal("shut_down", error.Name);
            Check.True(!sent, "the reply after Dispose was not sent");
            AssertSendsThrowShutDown(pumped);

            // On the callback thread from an immediate tool handler.
            var fromTool = new OamBridge(dispatchOnCallbackThread: true);
            fromTool.RegisterTool("quit", "Quits.", null, call => { fromTool.Dispose(); return "bye"; });
            fromTool.CallBlocking("session/create", J.O("session", "q", "tools", fromTool.ToolDefinitions("quit"),
                "model", J.Scripted(J.ToolCallStep("quit"), J.O("text", "after"))));
            var quitTurn = fromTool.Session("q").RespondAsync("x");
            Check.True(((IAsyncResult)quitTurn).AsyncWaitHandle.WaitOne(Suite.WaitSeconds * 1000), "the turn ended");
            Check.Equal("shut_down", ((OamException)quitTurn.Exception.InnerException).Name);
            AssertSendsThrowShutDown(fromTool);
        }

        [Test]
        public static void AHundredCreateDisposeCyclesLeaveNoThreads()
        {
            int firstTotal = 0, firstOam = 0;
            for (int cycle = 0; cycle < 100; cycle++)
            {
                bool inline = cycle % 2 == 1;
                var bridge = new OamBridge(dispatchOnCallbackThread: inline);
                bridge.RegisterTool("ring", "Ring.", null, call => "ding");
                bridge.CallBlocking("session/create", J.O("session", "c", "tools", bridge.ToolDefinitions("ring"), "model", J.Scripted(
                    J.ToolCallStep("ring"), J.O("template", "{toolOutput}", "chunks", 2), J.O("text", "late", "delayMs", 600000))));
                var session = bridge.Session("c");
                var text = MainThread.Run(async () =>
                {
                    var result = await session.RespondAsync("x");
                    // Leave a turn running into the Dispose.
                    var started = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
                    var last = session.RespondAsync("y", onEvent: e => started.TrySetResult(true));
                    await started.Task;
                    bridge.Dispose();
                    await Check.ThrowsAsync<OamException>(() => last, "the last turn");
                    return result["text"];
                }, bridge);
                Check.Equal("ding", text, "cycle " + cycle);
                if (cycle == 0)
                {
                    firstTotal = ThreadCensus.Total();
                    firstOam = ThreadCensus.NamedOam(); // bridges other tests leave undisposed on purpose
                }
            }
            // Closing threads may need a moment to end after Dispose returned (there is no event for a thread's
            // exit): look again for a bounded while, as the C suite does.
            int total = ThreadCensus.Total(), oam = ThreadCensus.NamedOam();
            var deadline = DateTime.UtcNow.AddSeconds(10);
            while ((oam > firstOam || total > firstTotal + 8) && DateTime.UtcNow < deadline)
            {
                Thread.Sleep(20);
                total = ThreadCensus.Total();
                oam = ThreadCensus.NamedOam();
            }
            Console.WriteLine("      threads after the first cycle: " + firstTotal + " (oam-*: " + firstOam + "), after 100: " + total + " (oam-*: " + oam + ")");
            Check.Equal(firstOam, oam, "oam-* threads left");
            Check.True(total <= firstTotal + 8, "threads grew from " + firstTotal + " to " + total);
        }

        // ---- bad input, in child processes -----------------------------------------------------------------

        private static string NativeDir()
        {
            var dir = Environment.GetEnvironmentVariable("OAM_FFI_DIR");
            if (string.IsNullOrEmpty(dir)) throw new AssertionFailed("OAM_FFI_DIR is not set (the test script sets it)");
            return dir;
        }

        private static string TempDir(string name)
        {
            var dir = Path.Combine(Path.GetTempPath(), "oam-csharp-" + name + "-" + System.Diagnostics.Process.GetCurrentProcess().Id);
            if (Directory.Exists(dir)) Directory.Delete(dir, true);
            Directory.CreateDirectory(dir);
            return dir;
        }

        [Test]
        public static void AMissingLibraryIsAClearException()
        {
            var empty = TempDir("empty");
            var run = Probes.Spawn("library-unavailable", new Dictionary<string, string> { { "LD_LIBRARY_PATH", empty } }, empty);
            Check.Equal(0, run.Exit, run.ToString());
            Check.Contains("library_unavailable / library_unavailable", run.Out);
            Check.Contains("libOpenAppleModelsFFI could not be loaded", run.Out);
        }

        [Test]
        public static void AWrongLibraryIsAClearException()
        {
            // Not a library at all, then a real library without the oam functions.
            var garbage = TempDir("garbage");
            File.WriteAllText(Path.Combine(garbage, "libOpenAppleModelsFFI.so"), "this is not an ELF file\n");
            var run = Probes.Spawn("library-unavailable", new Dictionary<string, string> { { "LD_LIBRARY_PATH", garbage } }, garbage);
            Check.Equal(0, run.Exit, run.ToString());
            Check.Contains("library_unavailable / library_unavailable", run.Out);

            var other = TempDir("other");
            var someLibrary = new[] { "/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1", "/lib/aarch64-linux-gnu/libz.so.1" }
                .FirstOrDefault(File.Exists);
            Check.True(someLibrary != null, "a system library to stand in (libz) exists");
            File.Copy(someLibrary, Path.Combine(other, "libOpenAppleModelsFFI.so"));
            run = Probes.Spawn("library-unavailable", new Dictionary<string, string> { { "LD_LIBRARY_PATH", other } }, other);
            Check.Equal(0, run.Exit, run.ToString());
            Check.Contains("library_unavailable / library_unavailable", run.Out);
            Check.Contains("EntryPointNotFoundException", run.Out);
        }

        [Test]
        public static void AJvmThatCannotStartIsAClearException()
        {
            var run = Probes.Spawn("no-jvm", new Dictionary<string, string>
            {
                { "LD_LIBRARY_PATH", NativeDir() }, { "OAM_JAVA_HOME", "/nonexistent/java" }, { "OAM_BRIDGE_LOG", null },
            });
            Check.Equal(0, run.Exit, run.ToString());
            Check.Contains("bridge_unavailable / bridge_unavailable", run.Out);
            Check.Contains("probe: version still " + OamBridge.Version, run.Out);
            Check.Contains("/nonexistent/java", run.Err, "stderr says what was looked at");
        }

        [Test]
        public static void ExitingWithoutDisposeEndsCleanly()
        {
            var run = Probes.Spawn("exit-without-dispose", new Dictionary<string, string> { { "LD_LIBRARY_PATH", NativeDir() } });
            Check.Equal(0, run.Exit, run.ToString());
            Check.Contains("probe: leaving with the turn WaitingForActivation", run.Out);
        }
    }
}
