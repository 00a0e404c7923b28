// The binding against the real bridge: libOpenAppleModelsFFI on this machine's JVM, always with scripted models.
// The scenarios are those of bindings/python/test_open_apple_models.py, plus what only C# has (Pump on a main
// thread, deferred ToolReply, Dispose from any thread).
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using OpenAppleModels;

namespace OpenAppleModels.Tests
{
    public static class BridgeTests
    {
        private static readonly Dictionary<string, object> GateParameters =
            J.O("type", "object", "properties", J.O("gate", J.O("type", "string")), "required", J.A("gate"));

        [Test]
        public static void PingAnswersAnEmptyObject()
        {
            using (var bridge = new OamBridge())
            {
                var result = MainThread.Run(() => bridge.PingAsync(), bridge);
                Check.Equal(J.O(), result);
            }
        }

        [Test]
        public static void InitializeReportsTheServerAndItsCapabilities()
        {
            using (var bridge = new OamBridge())
            {
                var result = MainThread.Run(() => bridge.InitializeAsync("csharp-tests"), bridge);
                Check.Equal("1.0", result["protocolVersion"]);
                var server = J.Obj(result["server"]);
                Check.Equal("open-apple-models", server["name"]);
                Check.Equal(OamBridge.Version, server["version"], "the library's version is the server's");
                Check.True(J.List(J.Obj(result["capabilities"])["methods"]).Contains("session/respond"), "session/respond is served");
            }
        }

        [Test]
        public static void AnUnknownMethodIsMethodNotFound()
        {
            using (var bridge = new OamBridge())
            {
                var error = MainThread.Run(() => Check.ThrowsAsync<OamException>(() => bridge.RequestAsync("no/such"), "no/such"), bridge);
                Check.Equal(-32601, error.Code);
                Check.Equal("method_not_found", error.Name);
            }
        }

        [Test]
        public static void CallBlockingNeedsNoPump()
        {
            using (var bridge = new OamBridge())
            {
                Check.Equal(J.O(), bridge.CallBlocking("ping"));
                var availability = J.Obj(bridge.CallBlocking("model/availability", null, 5000));
                Check.Equal(false, availability["available"]);
                var error = Check.Throws<OamException>(() => bridge.CallBlocking("session/respond", J.O("session", "missing", "prompt", "x")), "missing session");
                Check.Equal("session_not_found", error.Name);
            }
        }

        [Test]
        public static void CallBlockingTimesOutAndCancelsItsTurn()
        {
            using (var bridge = new OamBridge())
            {
                bridge.CallBlocking("session/create", J.O("session", "slow", "model",
                    J.Scripted(J.O("text", "late", "delayMs", 60000), J.O("text", "next"))));
                var error = Check.Throws<OamException>(() => bridge.CallBlocking("session/respond", J.O("session", "slow", "prompt", "x"), 200), "timeout");
                Check.Equal(-32024, error.Code);
                Check.Equal("timeout", error.Name);
                // The timed-out turn was cancelled: the next one runs now instead of waiting a minute behind it.
                var next = J.Obj(bridge.CallBlocking("session/respond", J.O("session", "slow", "prompt", "x"), 0));
                Check.Equal("next", next["text"]);
            }
        }

        [Test]
        public static void DisposeCancelsABlockingCallInFlight()
        {
            var bridge = new OamBridge(dispatchOnCallbackThread: true);
            bridge.CallBlocking("session/create", J.O("session", "w", "model", J.Scripted(J.O("text", "never", "delayMs", 600000))));
            var started = new ManualResetEventSlim();
            bridge.NotificationReceived += (method, p) => { if (method == "session/event") started.Set(); };
            Exception caught = null;
            var blocked = new Thread(() =>
            {
                try
                {
                    bridge.CallBlocking("session/respond", J.O("session", "w", "prompt", "x", "stream", true), 0);
                }
                catch (Exception e)
                {
                    caught = e;
                }
            });
            blocked.Start();
            Check.True(started.Wait(Suite.WaitSeconds * 1000), "the blocking turn started");
            bridge.Dispose();
            Check.True(blocked.Join(Suite.WaitSeconds * 1000), "the blocked call returned");
            Check.Equal("cancelled", ((OamException)caught).Name);
            Check.Equal("shut_down", Check.Throws<OamException>(() => bridge.CallBlocking("ping"), "after Dispose").Name);
        }

        [Test]
        public static void AToolRoundTripWithStreaming()
        {
            using (var bridge = new OamBridge())
            {
                var seen = new List<ToolCall>();
                bool onMainThread = false;
                bridge.RegisterTool("open_gate", "Open a named gate.", GateParameters, call =>
                {
                    onMainThread = MainThread.IsCurrent;
                    seen.Add(call);
                    return J.O("opened", true);
                });
                var deltas = new List<string>();
                var events = new List<Dictionary<string, object>>();
                OamSession session = null;
                var result = MainThread.Run(async () =>
                {
                    session = await bridge.CreateSessionAsync("You guard the gate.", new object[] { "open_gate" },
                        J.O("toolChoice", "required"), J.Scripted(J.ToolCallStep("open_gate", J.O("gate", "north")),
                            J.O("template", "Result: {toolOutput}", "chunks", 4)));
                    Check.True(MainThread.IsCurrent, "an await resumes on the main thread");
                    return await session.RespondAsync("Open the north gate.", deltas.Add, events.Add);
                }, bridge);
                Check.Equal("Result: {\"opened\":true}", result["text"]);
                Check.Equal(result["text"], string.Concat(deltas), "the deltas join to the text");
                Check.True(deltas.Count > 1, "more than one delta");
                Check.Equal(1, seen.Count);
                Check.Equal(J.O("gate", "north"), seen[0].Arguments);
                Check.Equal("north", seen[0].GetString("gate"));
                Check.Equal(session.Id, seen[0].Session);
                Check.Equal("open_gate", seen[0].Name);
                Check.True(seen[0].RequestId.StartsWith("cs-", StringComparison.Ordinal), "the request id " + seen[0].RequestId);
                Check.True(seen[0].RpcId is string && ((string)seen[0].RpcId).StartsWith("t-", StringComparison.Ordinal), "tool/call ids are t-<n>");
                Check.True(onMainThread, "the tool handler ran in Pump on the main thread");
                var types = events.Select(e => e["type"] as string).ToList();
                Check.True(types.IndexOf("toolCallStarted") >= 0 && types.IndexOf("toolCallStarted") < types.IndexOf("toolCallCompleted"),
                    "toolCallStarted before toolCallCompleted: " + string.Join(",", types));
                Check.Equal(J.O("opened", true), J.Obj(J.List(result["toolCalls"])[0])["output"]);
            }
        }

        [Test]
        public static void ADeferredToolIsAnsweredFramesLaterFromAnotherThread()
        {
            using (var bridge = new OamBridge())
            {
                ToolReply held = null;
                var called = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
                bridge.RegisterTool("open_gate", "Open a gate (takes an animation).", GateParameters, (ToolCall call, ToolReply reply) =>
                {
                    held = reply;
                    called.SetResult(true);
                });
                bool second = true, afterAnswer = true;
                var result = MainThread.Run(async () =>
                {
                    var session = await bridge.CreateSessionAsync(tools: new object[] { "open_gate" }, model: J.Scripted(
                        J.ToolCallStep("open_gate", J.O("gate", "west")), J.O("template", "{toolOutput}")));
                    var turn = session.RespondAsync("Open the west gate.");
                    await called.Task;
                    Check.True(!turn.IsCompleted && !held.IsAnswered, "the turn waits for the reply");
                    await Task.Yield(); // a few frames later, the animation ends on a worker thread
                    await Task.Run(() =>
                    {
                        Check.True(held.Ok(J.O("opened", true, "gate", held.Call.GetString("gate"))), "the first answer is sent");
                        second = held.Ok("again");
                        afterAnswer = held.Error("too late");
                    });
                    return await turn;
                }, bridge);
                Check.Equal("{\"opened\":true,\"gate\":\"west\"}", result["text"]);
                Check.True(!second && !afterAnswer, "the first answer wins; later ones return false");
                Check.True(held.IsAnswered && !held.IsCancelled, "answered, not cancelled");
            }
        }

        /// <summary>A game whose tools must run on its own thread (Unity's main thread, a server tick): the async
        /// tool hands the work to the game's tick queue and returns a Task; the game thread starts the turn and
        /// keeps ticking (it never blocks on the turn), runs the tool's work on a later tick, and sees the reply.
        /// The bridge dispatches on its callback thread, so nothing but the ticks runs on the game thread.</summary>
        [Test]
        public static void AnAsyncToolRunsOnTheGameThreadWhileThatThreadKeepsTicking()
        {
            using (var bridge = new OamBridge(dispatchOnCallbackThread: true))
            using (var ticks = new System.Collections.Concurrent.BlockingCollection<Action>())
            {
                var gameThread = Thread.CurrentThread;
                Thread ranOn = null, handlerOn = null;
                bridge.RegisterToolAsync("open_gate", "Open a gate (on the game thread).", GateParameters, (call, cancel) =>
                {
                    handlerOn = Thread.CurrentThread;
                    var done = new TaskCompletionSource<object>();
                    ticks.Add(() =>
                    {
                        ranOn = Thread.CurrentThread;
                        done.SetResult(J.O("opened", true, "gate", call.GetString("gate")));
                    });
                    return done.Task;
                });
                var session = bridge.CreateSessionAsync(tools: new object[] { "open_gate" }, model: J.Scripted(
                    J.ToolCallStep("open_gate", J.O("gate", "east")), J.O("template", "{toolOutput}"))).GetAwaiter().GetResult();
                var turn = session.RespondAsync("Open the east gate.");
                turn.ContinueWith(_ => ticks.Add(() => { }));   // wakes the loop once the turn is over
                int ticked = 0;
                while (!turn.IsCompleted)
                {
                    Action work;
                    Check.True(ticks.TryTake(out work, Suite.WaitSeconds * 1000), "a tick arrived (no hang)");
                    work();
                    ticked++;
                }
                Check.Equal("{\"opened\":true,\"gate\":\"east\"}", turn.Result["text"]);
                Check.True(ranOn == gameThread, "the tool's work ran on the game thread");
                Check.True(handlerOn != gameThread, "the handler itself ran on the bridge's thread");
                Check.True(ticked >= 1, "the game thread ticked while the turn ran");
            }
        }

        [Test]
        public static void SettingsReachTheLibraryAsJsonWithoutEnvironmentVariables()
        {
            using (var bridge = new OamBridge(J.O("maxSessions", 1, "scriptedModels", true, "logLevel", "warning")))
            {
                MainThread.Run(() => bridge.CreateSessionAsync(model: "scripted"), bridge);
                var error = MainThread.Run(() => Check.ThrowsAsync<OamException>(() => bridge.CreateSessionAsync(model: "scripted"),
                    "a second session"), bridge);
                Check.Equal("session_limit", error.Name);
            }
            var refused = Check.Throws<OamException>(() => new OamBridge(J.O("maxSession", 1)), "a misspelt setting");
            Check.Equal("bridge_unavailable", refused.Name);
        }

        [Test]
        public static void AToolErrorBecomesAnErrorOutputTheModelSees()
        {
            using (var bridge = new OamBridge())
            {
                bridge.RegisterTool("open_gate", "Open the gate.", null, (ToolCall call, ToolReply reply) => reply.Error("The chain is jammed."));
                bridge.RegisterTool("count", "Count.", null, call =>
                {
                    int zero = 0;
                    return 1 / zero;
                });
                var result = MainThread.Run(async () =>
                {
                    var session = await bridge.CreateSessionAsync(tools: new object[] { "open_gate", "count" }, model: J.Scripted(
                        J.O("toolCalls", J.A(J.O("name", "open_gate"), J.O("name", "count"))), J.O("template", "{toolOutputs}")));
                    return await session.RespondAsync("x");
                }, bridge);
                var lines = ((string)result["text"]).Split('\n').OrderBy(s => s, StringComparer.Ordinal).ToList();
                Check.Equal(J.A("Error: Attempted to divide by zero.", "Error: The chain is jammed."), lines);
                Check.True(J.List(result["toolCalls"]).All(r => (bool)J.Obj(r)["isError"]), "both records are errors");
                Check.Equal("Open the gate.", J.Obj(bridge.ToolDefinitions("open_gate")[0])["description"]);
            }
        }

        [Test]
        public static void AToolTimeoutRaisesCancelledAndDropsTheLateAnswer()
        {
            using (var bridge = new OamBridge())
            {
                ToolReply held = null;
                var cancelled = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
                bridge.RegisterTool("slow", "Never finishes.", null, (ToolCall call, ToolReply reply) =>
                {
                    held = reply;
                    reply.Cancelled += () => cancelled.TrySetResult(reply.CancelReason);
                }, timeoutSeconds: 0.2);
                string reason = null;
                var result = MainThread.Run(async () =>
                {
                    var session = await bridge.CreateSessionAsync(tools: new object[] { "slow" }, model: J.Scripted(
                        J.ToolCallStep("slow"), J.O("template", "{toolOutput}")));
                    var turn = await session.RespondAsync("x");
                    reason = await cancelled.Task; // tool/cancel reached the reply
                    return turn;
                }, bridge);
                Check.True((bool)J.Obj(J.List(result["toolCalls"])[0])["isError"], "the timed-out call is an error");
                Check.Contains("timed out", (string)result["text"]);
                Check.Contains("timed out", reason);
                Check.True(held.IsCancelled && held.CancellationToken.IsCancellationRequested, "the reply is cancelled");
                Check.True(!held.Ok("late"), "a late answer is dropped");
                bool ranAtOnce = false;
                held.Cancelled += () => ranAtOnce = true;
                Check.True(ranAtOnce, "a Cancelled handler added afterwards runs at once");
                Check.Equal(1L, J.Obj(J.List(result["toolCalls"])[0]).ContainsKey("output") ? 1L : 0L, "the record has an output");
            }
        }

        [Test]
        public static void OtherSessionsRunWhileOneWaitsForItsTool()
        {
            using (var bridge = new OamBridge())
            {
                ToolReply held = null;
                bridge.RegisterTool("hold", "Waits until released.", null, (ToolCall call, ToolReply reply) => held = reply);
                var result = MainThread.Run(async () =>
                {
                    var first = await bridge.CreateSessionAsync(tools: new object[] { "hold" }, model: J.Scripted(
                        J.ToolCallStep("hold"), J.O("template", "{toolOutput}")));
                    var second = await bridge.CreateSessionAsync(model: J.Scripted(J.O("text", "second", "delayMs", 100)));
                    var waiting = first.RespondAsync("x");
                    Check.Equal("second", (await second.RespondAsync("y"))["text"]);
                    Check.True(!waiting.IsCompleted, "the first turn still waits for its tool");
                    held.Ok("released");
                    return await waiting;
                }, bridge);
                Check.Equal("released", result["text"]);
            }
        }

        [Test]
        public static void EventsAreRoutedToTheirOwnRequest()
        {
            using (var bridge = new OamBridge())
            {
                var a = new List<string>();
                var b = new List<string>();
                MainThread.Run(async () =>
                {
                    var alpha = await bridge.CreateSessionAsync(model: J.Scripted(J.O("text", "a1 a2 a3", "chunks", 3, "delayMs", 50)));
                    var beta = await bridge.CreateSessionAsync(model: J.Scripted(J.O("text", "b1 b2 b3", "chunks", 3, "delayMs", 50)));
                    await Task.WhenAll(alpha.RespondAsync("x", a.Add), beta.RespondAsync("y", b.Add));
                }, bridge);
                Check.Equal("a1 a2 a3", string.Concat(a));
                Check.Equal("b1 b2 b3", string.Concat(b));
            }
        }

        [Test]
        public static void CancelCountsAndTheTurnFailsCancelled()
        {
            using (var bridge = new OamBridge())
            {
                OamException cancelled = null, blocked = null;
                MainThread.Run(async () =>
                {
                    var session = await bridge.CreateSessionAsync(model: J.Scripted(
                        J.O("text", "never", "delayMs", 600000), J.O("error", "guardrail_violation")));
                    var started = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
                    var turn = session.RespondAsync("x", onEvent: e => started.TrySetResult(true));
                    await started.Task;
                    Check.Equal(1L, await session.CancelAsync());
                    cancelled = await Check.ThrowsAsync<OamException>(() => turn, "the cancelled turn");
                    blocked = await Check.ThrowsAsync<OamException>(() => session.RespondAsync("again"), "the scripted error");
                }, bridge);
                Check.Equal(-32009, cancelled.Code);
                Check.Equal("cancelled", cancelled.Name);
                Check.Equal(-32002, blocked.Code);
                Check.Equal("guardrail_violation", blocked.Name);
            }
        }

        [Test]
        public static void SessionManagement()
        {
            using (var bridge = new OamBridge())
            {
                bridge.RegisterTool("ring", "Ring the bell.", null, call => "ding");
                var error = MainThread.Run(async () =>
                {
                    var session = await bridge.CreateSessionAsync("Be brief.", new object[] { J.O("name", "raw_tool", "description", "A raw definition.") },
                        J.O("temprature", 1), J.Scripted(J.O("text", "one"), J.O("text", "two")), session: "keeper");
                    Check.Equal("keeper", session.Id);
                    Check.True(session.Warnings.Any(w => w.Contains("temprature")), "a warning names the unknown option");
                    await session.SetInstructionsAsync("Be verbose.");
                    await session.SetContextNoteAsync("It is raining.");
                    Check.Equal(J.A(), await session.SetToolsAsync("ring"));
                    Check.Equal("one", (await session.RespondAsync("x"))["text"]);
                    var sessions = await bridge.ListSessionsAsync();
                    Check.Equal(1, sessions.Count);
                    Check.Equal("keeper", sessions[0]["session"]);
                    Check.Equal("Be verbose.", sessions[0]["instructions"]);
                    Check.Equal(J.A("ring"), sessions[0]["tools"]);
                    Check.Equal(2L, sessions[0]["entries"]);
                    await session.ResetAsync();
                    Check.Equal(0L, (await bridge.ListSessionsAsync())[0]["entries"]);
                    await session.DeleteAsync();
                    Check.Equal(0, (await bridge.ListSessionsAsync()).Count);
                    return await Check.ThrowsAsync<OamException>(() => bridge.Session("keeper").RespondAsync("x"), "deleted");
                }, bridge);
                Check.Equal("session_not_found", error.Name);
            }
        }

        [Test]
        public static void ASchemaTurnReturnsStructuredOutput()
        {
            using (var bridge = new OamBridge())
            {
                var result = MainThread.Run(async () =>
                {
                    var session = await bridge.CreateSessionAsync(model: J.Scripted(J.O("json", J.O("choice", "flee", "why", "outnumbered"))));
                    return await session.RespondAsync("x", schema: J.O("type", "object", "properties", J.O(
                        "choice", J.O("type", "string", "enum", J.A("fight", "flee")), "why", J.O("type", "string"))), toolChoice: "none");
                }, bridge);
                Check.Equal(J.O("choice", "flee", "why", "outnumbered"), result["structured"]);
            }
        }

        [Test]
        public static void ATranscriptRoundTrip()
        {
            using (var bridge = new OamBridge())
            {
                var entries = MainThread.Run(async () =>
                {
                    var session = await bridge.CreateSessionAsync(model: J.Scripted(J.O("text", "one")));
                    await session.RespondAsync("x");
                    var saved = await session.TranscriptAsync();
                    var restored = await bridge.CreateSessionAsync(history: saved, model: J.Scripted(J.O("text", "two")));
                    await restored.RespondAsync("y");
                    return (await bridge.ListSessionsAsync()).Select(s => s["entries"]).ToList();
                }, bridge);
                Check.Equal(J.A(2L, 4L), entries);
            }
        }

        [Test]
        public static void ToolResultsAreConvertedToJson()
        {
            using (var bridge = new OamBridge())
            {
                bridge.RegisterTool("inventory", "What is in stock.", null, call => new Dictionary<string, object>
                {
                    { "items", new HashSet<string> { "iron" } }, { "price", 1.50m }, { "count", 3 }, { "weight", 2.0 },
                    { "day", new DateTime(2026, 12, 2, 0, 0, 0, DateTimeKind.Utc) }, { "color", ConsoleColor.Red },
                    { "smith", new { name = "Gorm", age = 52 } }, { "tags", new[] { "a", "b" } },
                });
                bridge.RegisterTool("nothing", "Returns nothing.", null, call => null);
                bridge.RegisterTool("not_a_number", "Returns NaN.", null, call => double.NaN);
                bridge.RegisterTool("a_thread", "Returns a thread.", null, call => Thread.CurrentThread);
                var records = MainThread.Run(async () =>
                {
                    var session = await bridge.CreateSessionAsync(tools: new object[] { "inventory", "nothing", "not_a_number", "a_thread" },
                        model: J.Scripted(J.ToolCallStep("inventory"), J.ToolCallStep("nothing"), J.ToolCallStep("not_a_number"),
                            J.ToolCallStep("a_thread"), J.O("text", "done")));
                    return J.List((await session.RespondAsync("x"))["toolCalls"]).Select(J.Obj).ToList();
                }, bridge);
                Check.Equal(J.O("items", J.A("iron"), "price", 1.5, "count", 3L, "weight", 2.0, "day", "2026-12-02T00:00:00.0000000Z",
                    "color", "Red", "smith", J.O("name", "Gorm", "age", 52L), "tags", J.A("a", "b")), records[0]["output"]);
                Check.Equal("", records[1]["output"]);
                Check.True((bool)records[2]["isError"], "NaN is an error output");
                Check.Contains("JSON", records[2]["output"] as string);
                Check.True((bool)records[3]["isError"], "an unknown type is an error output");
                Check.Contains("System.Threading.Thread", records[3]["output"] as string);
            }
        }

        [Test]
        public static void BadParamsFailBeforeAnythingIsPending()
        {
            using (var bridge = new OamBridge())
            {
                MainThread.Run(async () =>
                {
                    await Check.ThrowsAsync<OamJsonException>(() => bridge.RequestAsync("ping", J.O("x", double.PositiveInfinity)), "Infinity");
                    await Check.ThrowsAsync<OamJsonException>(() => bridge.RequestAsync("ping", J.O("x", double.NaN)), "NaN");
                    await Check.ThrowsAsync<OamJsonException>(() => bridge.RequestAsync("ping", J.O("x", new object())), "an object");
                    Check.Throws<OamJsonException>(() => bridge.Notify("ping", J.O("x", float.NaN)), "Notify with NaN");
                    Check.Throws<OamJsonException>(() => bridge.CallBlocking("ping", J.O("x", double.NegativeInfinity)), "CallBlocking with -Infinity");
                    Exception callbackError = null;
                    bridge.Request("ping", J.O("x", double.NaN), r => { }, e => callbackError = e);
                    Check.True(callbackError is OamJsonException, "Request reports the error at once");
                    Check.Equal(0, bridge.PendingCount, "nothing is left pending");
                    Check.Equal(J.O(), await bridge.PingAsync());
                }, bridge);
            }
        }

        [Test]
        public static void AnUnregisteredToolIsAnsweredWithAJsonRpcError()
        {
            var transport = new RecordingTransport(new NativeTransport());
            using (var bridge = new OamBridge(transport))
            {
                var result = MainThread.Run(async () =>
                {
                    var session = await bridge.CreateSessionAsync(tools: new object[] { J.O("name", "ghost", "description", "Nobody handles this.") },
                        model: J.Scripted(J.ToolCallStep("ghost"), J.O("template", "{toolOutput}")));
                    return await session.RespondAsync("x");
                }, bridge);
                Check.True((bool)J.Obj(J.List(result["toolCalls"])[0])["isError"], "an error record");
                Check.Equal("Error: No handler is registered for the tool 'ghost'.", result["text"]);
                var reply = transport.SentMessages().Single(m => m.ContainsKey("id") && m["id"] as string == "t-1");
                Check.Equal(J.O("code", -32601L, "message", "No handler is registered for the tool 'ghost'.",
                    "data", J.O("code", "method_not_found", "method", "tool/call")), reply["error"], "the same reply as the Python binding");
            }
        }

        [Test]
        public static void ACancelledTurnCancelsItsToolReply()
        {
            using (var bridge = new OamBridge())
            {
                ToolReply held = null;
                var entered = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
                var cancelled = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
                bridge.RegisterTool("wait", "Waits.", null, (ToolCall call, ToolReply reply) =>
                {
                    held = reply;
                    reply.CancellationToken.Register(() => cancelled.TrySetResult(true));
                    entered.SetResult(true);
                });
                MainThread.Run(async () =>
                {
                    var session = await bridge.CreateSessionAsync(tools: new object[] { "wait" }, model: J.Scripted(J.ToolCallStep("wait")));
                    var turn = session.RespondAsync("x");
                    await entered.Task;
                    await session.CancelAsync();
                    await Check.ThrowsAsync<OamException>(() => turn, "the cancelled turn");
                    await cancelled.Task;
                }, bridge);
                Check.True(held.IsCancelled, "the reply knows");
            }
        }

        [Test]
        public static void ACallbackThatThrowsIsLoggedAndNothingElseStops()
        {
            var logged = new List<string>();
            var previous = OamBridge.Log;
            OamBridge.Log = message => { lock (logged) logged.Add(message); };
            try
            {
                foreach (var inline in new[] { false, true })
                {
                    using (var bridge = new OamBridge(dispatchOnCallbackThread: inline))
                    {
                        var heard = new List<string>();
                        bridge.NotificationReceived += (method, p) => { throw new InvalidOperationException("listener broke"); };
                        bridge.NotificationReceived += (method, p) => { lock (heard) heard.Add(method); };
                        var result = MainThread.Run(async () =>
                        {
                            var session = await bridge.CreateSessionAsync(model: J.Scripted(J.O("text", "still fine", "chunks", 2)));
                            return await session.RespondAsync("x", text => { throw new InvalidOperationException("typewriter broke"); });
                        }, bridge);
                        Check.Equal("still fine", result["text"], "inline " + inline);
                        lock (heard) Check.True(heard.Count(m => m == "session/event") >= 2, "the second listener heard every event");
                    }
                }
                lock (logged)
                {
                    Check.True(logged.Any(m => m.Contains("typewriter broke")), "the event handler's exception is logged");
                    Check.True(logged.Any(m => m.Contains("listener broke")), "the listener's exception is logged");
                }
            }
            finally
            {
                OamBridge.Log = previous;
            }
        }

        [Test]
        public static void AnUndisposedUnreferencedBridgeStaysAlive()
        {
            WeakReference bridge;
            var turn = StartAndForget(out bridge);
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
            Check.True(bridge.IsAlive, "the native side's handle keeps an undisposed bridge alive");
            Check.True(turn.Wait(Suite.WaitSeconds * 1000), "the late response still arrived");
            Check.Equal("late", J.Obj(turn.Result)["text"]);
            ((OamBridge)bridge.Target).Dispose();
        }

        private static Task<object> StartAndForget(out WeakReference reference)
        {
            var bridge = new OamBridge(dispatchOnCallbackThread: true);
            reference = new WeakReference(bridge);
            bridge.CallBlocking("session/create", J.O("session", "late", "model", J.Scripted(J.O("text", "late", "delayMs", 200))));
            return bridge.RequestAsync("session/respond", J.O("session", "late", "prompt", "x"));
        }

        // ---- game methods ----------------------------------------------------------------------------------

        private static Dictionary<string, object> NpcReply(string emotion, string line)
        {
            return J.O("json", J.O("emotion", emotion, "line", line, "player_options", J.A("A", "B", "C"), "ends_conversation", false));
        }

        [Test]
        public static void AnNpcTalksWithLineAndEmotionEvents()
        {
            using (var bridge = new OamBridge())
            {
                var seen = new List<ToolCall>();
                bridge.RegisterTool("check_inventory", "Look up an item's stock.", J.O("type", "object", "properties",
                    J.O("item", J.O("type", "string"))), call => { seen.Add(call); return J.O("stock", 3); });
                var lines = new List<string>();
                var emotions = new List<string>();
                Dictionary<string, object> turn = null;
                string bark = null;
                List<Dictionary<string, object>> npcs = null;
                MainThread.Run(async () =>
                {
                    var world = await bridge.CreateWorldAsync(J.O("player", J.O("gold", 60)), "village");
                    var npc = await bridge.CreateNpcAsync(J.O("name", "Gorm", "role", "the village blacksmith"),
                        new object[] { "check_inventory" }, world.Id, model: J.Scripted(
                            J.ToolCallStep("check_inventory", J.O("item", "iron sword")),
                            NpcReply("proud", "Three iron swords, finest in the valley."),
                            J.O("text", "Rain again.")), npc: "gorm");
                    Check.Equal("gorm", npc.Id);
                    Check.True(npc.Tools.Contains("check_inventory"), "the NPC lists its tool: " + string.Join(",", npc.Tools));
                    turn = await npc.TalkAsync("Got any iron swords?", J.O("gold", 45), lines.Add, emotions.Add);
                    bark = await npc.BarkAsync("It starts to rain.");
                    npcs = await bridge.ListNpcsAsync();
                }, bridge);
                Check.Equal("Three iron swords, finest in the valley.", turn["line"]);
                Check.Equal("proud", turn["emotion"]);
                Check.Equal(J.A("A", "B", "C"), turn["playerOptions"]);
                Check.True(lines.Count > 0, "on_line was called");
                Check.Equal(turn["line"], lines[lines.Count - 1], "the last on_line value is the line");
                Check.Equal(J.A("proud"), emotions);
                Check.Equal(1, seen.Count);
                Check.Equal("gorm", seen[0].Npc);
                Check.Equal(null, seen[0].Session);
                Check.Equal("Rain again.", bark);
                Check.Equal(1, npcs.Count);
                Check.Equal("gorm", npcs[0]["npc"]);
                Check.Equal(1L, npcs[0]["turnCount"]);
                Check.Equal("village", npcs[0]["world"]);
            }
        }

        [Test]
        public static void AnNpcUpdatesSavesAndRestores()
        {
            using (var bridge = new OamBridge())
            {
                MainThread.Run(async () =>
                {
                    var npc = await bridge.CreateNpcAsync(J.O("name", "Gorm"), options: J.O("replyFormat", "text"),
                        model: J.Scripted(J.O("text", "[happy] Welcome!")));
                    var emotions = new List<string>();
                    var first = await npc.TalkAsync("Hello", onEmotion: emotions.Add);
                    Check.Equal("happy", first["emotion"]);
                    Check.Equal(J.A("happy"), emotions);
                    Check.Equal(J.A(), await npc.UpdateAsync(persona: J.O("role", "the smith"), memory: J.O("relationship", 30)));
                    var state = await npc.StateAsync();
                    Check.Equal(30L, J.Obj(state["memory"])["relationship"]);
                    Check.Equal("the smith", J.Obj(state["persona"])["role"]);
                    Check.Equal("text", J.Obj(state["options"])["replyFormat"]);
                    await npc.DeleteAsync();
                    var restored = await bridge.RestoreNpcAsync(state, model: J.Scripted(J.O("text", "[sad] Back again.")));
                    Check.Equal(npc.Id, restored.Id);
                    var again = await restored.TalkAsync("Hello again");
                    Check.Equal("Back again.", again["line"]);
                    Check.Equal("sad", again["emotion"]);
                    Check.Equal(30L, J.Obj((await restored.StateAsync())["memory"])["relationship"]);
                    var missing = await Check.ThrowsAsync<OamException>(() => bridge.Npc("nobody").TalkAsync("hi"), "an unknown NPC");
                    Check.Equal("npc_not_found", missing.Name);
                }, bridge);
            }
        }

        [Test]
        public static void DecisionsAndContent()
        {
            using (var bridge = new OamBridge())
            {
                MainThread.Run(async () =>
                {
                    var decision = await bridge.DecideAsync("Three wolves block the road.", new object[] { "fight", J.O("id", "retreat", "description", "Fall back") },
                        model: J.Scripted(J.O("json", J.O("reasoning", "Three wolves is too many.", "choice", "retreat"))));
                    Check.Equal("retreat", decision["optionID"]);
                    Check.Equal(false, decision["isFallback"]);
                    Check.True(decision.ContainsKey("confidence"), "a confidence");
                    var many = await bridge.DecideManyAsync(new object[]
                    {
                        J.O("situation", "a", "options", J.A("x", "y"), "model", J.Scripted(J.O("json", J.O("reasoning", "r", "choice", "x")))),
                        J.O("situation", "b", "options", J.A("x", "y"), "fallbackOptionID", "y", "model", J.Scripted(J.O("error", "guardrail_violation"))),
                    });
                    Check.Equal("x", many[0]["optionID"]);
                    Check.Equal("y", many[1]["optionID"]);
                    Check.Equal(true, many[1]["isFallback"]);
                    var content = await bridge.GenerateAsync("A sword.", J.O("type", "object", "properties", J.O(
                        "name", J.O("type", "string"), "damage", J.O("type", "integer"))), model: J.Scripted(J.O("json", J.O("damage", 7, "name", "Rusty Sword"))));
                    Check.Equal(J.A("name", "damage"), J.Obj(content).Keys.ToList(), "keys in schema order");
                    Check.Equal(7L, J.Obj(content)["damage"]);
                }, bridge);
            }
        }

        [Test]
        public static void AWorldSubscriptionSeesItsOwnChanges()
        {
            using (var bridge = new OamBridge())
            {
                var changes = new List<string>();
                MainThread.Run(async () =>
                {
                    var world = await bridge.CreateWorldAsync(world: "village");
                    Check.Equal(1L, await world.SetAsync("player", J.O("gold", 60)));
                    Check.Equal(null, await world.GetAsync("player.silver"));
                    Check.Equal("none", await world.GetAsync("player.silver", "none"));
                    var subscription = await world.SubscribeAsync(p => changes.Add(p["path"] + " " + Check.Show(Json.Field(p, "oldValue"))
                        + "->" + (p.ContainsKey("newValue") ? Check.Show(p["newValue"]) : "absent")), "player");
                    await world.SetAsync("player.gold", 45);
                    await world.MergeAsync(J.O("main", "open"), "quests");
                    Check.Equal(45L, await world.RemoveAsync("player.gold"));
                    Check.Equal(J.O("player", J.O(), "quests", J.O("main", "open")), await world.SnapshotAsync());
                    await world.UnsubscribeAsync(subscription);
                    await world.SetAsync("player.gold", 1);
                    await world.DeleteAsync();
                    var gone = await Check.ThrowsAsync<OamException>(() => world.GetAsync("player"), "a deleted world");
                    Check.Equal("world_not_found", gone.Name);
                }, bridge);
                Check.Equal(J.A("player.gold 60->45", "player.gold 45->absent"), changes);
            }
        }
    }
}
