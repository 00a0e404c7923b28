// Routing and wire shapes with a scripted transport: what a real bridge cannot be made to send (garbage lines,
// requests other than tool/call, events of other requests interleaved), and the exact params of every wrapper.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;
using OpenAppleModels;

namespace OpenAppleModels.Tests
{
    public static class RoutingTests
    {
        private static Dictionary<string, object> Event(object requestId, Dictionary<string, object> body)
        {
            return J.O("jsonrpc", "2.0", "method", "npc/event", "params", J.O("npc", "gorm", "requestId", requestId, "event", body));
        }

        [Test]
        public static void TalkAddsUpTheLineAndRoutesOnlyItsOwnEvents()
        {
            FakeTransport transport = null;
            transport = new FakeTransport(message =>
            {
                if (message["method"] as string != "npc/talk") return null;
                var id = message["id"];
                return new object[]
                {
                    Event(id, J.O("type", "emotion", "emotion", "proud")),
                    Event(id, J.O("type", "lineDelta", "delta", "Aye")),
                    Event("someone-else", J.O("type", "lineDelta", "delta", "WRONG")),
                    Event(id, J.O("type", "lineDelta", "delta", ", iron")),
                    Event(id, J.O("type", "lineReset", "line", "Iron swords.")),
                    Event(id, J.O("type", "lineDelta", "delta", " Cheap.")),
                    FakeTransport.ResultFor(message, J.O("npc", "gorm", "line", "Iron swords. Cheap.", "emotion", "proud")),
                };
            });
            using (var bridge = new OamBridge(transport))
            {
                var lines = new List<string>();
                var emotions = new List<string>();
                var events = new List<Dictionary<string, object>>();
                var result = MainThread.Run(() => bridge.Npc("gorm").TalkAsync("Swords?", J.O("gold", 45), lines.Add, emotions.Add, events.Add), bridge);
                Check.Equal(J.A("Aye", "Aye, iron", "Iron swords.", "Iron swords. Cheap."), lines);
                Check.Equal(result["line"], lines.Last());
                Check.Equal(J.A("proud"), emotions);
                Check.Equal(5, events.Count);
                Check.Equal(J.O("npc", "gorm", "line", "Swords?", "context", J.O("gold", 45L), "stream", true), transport.Sent[0]["params"]);
            }
        }

        [Test]
        public static void OnTextGivesEachReplyOnceWhenTheModelRewritesIt()
        {
            Func<object, string, string, bool, Dictionary<string, object>> text = (id, delta, whole, reset) =>
                J.O("jsonrpc", "2.0", "method", "session/event", "params", J.O("session", "guard", "requestId", id,
                    "event", J.O("type", "text", "delta", delta, "text", whole, "isReset", reset)));
            var transport = new FakeTransport(message =>
            {
                if (message["method"] as string != "session/respond") return null;
                var id = message["id"];
                return new object[]
                {
                    text(id, "The gate", "The gate", false),
                    text(id, " is open. ", "The gate is open. ", false),
                    text(id, "The gate is open. Go. ", "The gate is open. Go. ", true),  // extends: only the rest
                    text(id, "The gate is open. Go.", "The gate is open. Go.", true),    // trimmed: a rewrite
                    text(id, "", "", true),                                              // a new attempt
                    text(id, "Halt!", "Halt!", false),
                    FakeTransport.ResultFor(message, J.O("session", "guard", "text", "Halt!", "toolCalls", J.A())),
                };
            });
            using (var bridge = new OamBridge(transport))
            {
                var printed = new List<string>();
                var resets = new List<string>();
                MainThread.Run(() => bridge.Session("guard").RespondAsync("Open up.", printed.Add, onReset: resets.Add), bridge);
                Check.Equal(J.A("The gate", " is open. ", "Go. ", "Halt!"), printed);
                Check.Equal(J.A("The gate is open. Go.", ""), resets);
                printed.Clear();
                MainThread.Run(() => bridge.Session("guard").RespondAsync("Open up.", printed.Add), bridge);
                Check.Equal("The gate is open. Go. Halt!", string.Concat(printed));   // the reply once, never twice
            }
        }

        [Test]
        public static void WorldChangesGoToTheirSubscriptionFromTheFirstOne()
        {
            Func<string, string, object, object, Dictionary<string, object>> changed = (subscription, path, old, now) =>
                J.O("jsonrpc", "2.0", "method", "world/changed", "params", J.O("world", "village", "subscription", subscription,
                    "path", path, "oldValue", old, "newValue", now));
            var transport = new FakeTransport(message =>
            {
                switch (message["method"] as string)
                {
                    case "world/subscribe":
                        // The first change arrives right behind the response: no gap in which it could be lost.
                        return new object[] { FakeTransport.ResultFor(message, J.O("subscription", "sub1", "world", "village", "path", "player")),
                            changed("sub1", "player.gold", 60, 45), changed("sub2", "quests.main", null, "open") };
                    case "world/set":
                        return new object[] { changed("sub1", "player.gold", 45, 30), FakeTransport.ResultFor(message, J.O("version", 3)) };
                    case "world/unsubscribe":
                        return new object[] { FakeTransport.ResultFor(message, J.O("unsubscribed", true)), changed("sub1", "player.gold", 30, 0) };
                    default:
                        return new object[] { FakeTransport.ResultFor(message, J.O()) };
                }
            });
            using (var bridge = new OamBridge(transport))
            {
                var changes = new List<string>();
                MainThread.Run(async () =>
                {
                    var world = bridge.World("village");
                    var subscription = await world.SubscribeAsync(p => changes.Add(p["path"] + " " + p["oldValue"] + "->" + p["newValue"]), "player");
                    Check.Equal("sub1", subscription);
                    Check.Equal(3L, await world.SetAsync("player.gold", 30));
                    await world.UnsubscribeAsync(subscription);
                }, bridge);
                Check.Equal(J.A("player.gold 60->45", "player.gold 45->30"), changes);
            }
        }

        [Test]
        public static void ToolCancelRaisesCancelledAndNothingIsSent()
        {
            FakeTransport transport = null;
            transport = new FakeTransport(message =>
            {
                if (message["method"] as string != "npc/talk") return null;
                return new object[] { J.O("jsonrpc", "2.0", "id", "t-9", "method", "tool/call", "params", J.O("npc", "gorm",
                    "requestId", message["id"], "call", J.O("id", "c", "name", "slow", "arguments", J.O()))) };
            });
            using (var bridge = new OamBridge(transport))
            {
                ToolReply held = null;
                var entered = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
                bridge.RegisterTool("slow", "Slow.", null, (ToolCall call, ToolReply reply) => { held = reply; entered.SetResult(true); });
                string reason = null;
                MainThread.Run(async () =>
                {
                    var talk = bridge.Npc("gorm").TalkAsync("x");
                    await entered.Task;
                    Check.Equal("gorm", held.Call.Npc);
                    held.Cancelled += () => reason = held.CancelReason;
                    transport.Deliver(J.O("jsonrpc", "2.0", "method", "tool/cancel", "params", J.O("npc", "gorm", "id", "t-9", "reason", "Error: timed out.")));
                    Check.True(!talk.IsCompleted, "the talk itself goes on (the bridge would end it)");
                }, bridge);
                Check.Equal("Error: timed out.", reason);
                Check.True(!held.Ok("late"), "no answer after tool/cancel");
                Check.True(!transport.Sent.Any(m => m["id"] as string == "t-9"), "nothing was sent for t-9");
            }
        }

        [Test]
        public static void RequestsOtherThanToolCallAndUnknownToolsGetJsonRpcErrors()
        {
            var transport = new FakeTransport(message => null);
            using (var bridge = new OamBridge(transport))
            {
                transport.Deliver(J.O("jsonrpc", "2.0", "id", "x-1", "method", "client/whatever", "params", J.O()));
                transport.Deliver(J.O("jsonrpc", "2.0", "id", "t-3", "method", "tool/call", "params", J.O("session", "s",
                    "call", J.O("id", "c", "name", "ghost", "arguments", J.O()))));
                bridge.Pump();
                Check.Equal(J.O("jsonrpc", "2.0", "id", "x-1", "error", J.O("code", -32601L, "message", "The client does not handle 'client/whatever'.",
                    "data", J.O("code", "method_not_found", "method", "client/whatever"))), transport.Sent[0]);
                Check.Equal(J.O("jsonrpc", "2.0", "id", "t-3", "error", J.O("code", -32601L, "message", "No handler is registered for the tool 'ghost'.",
                    "data", J.O("code", "method_not_found", "method", "tool/call"))), transport.Sent[1]);
            }
        }

        [Test]
        public static void MessagesThatAreNotStrictJsonAreDroppedAndLogged()
        {
            var logged = new List<string>();
            var previous = OamBridge.Log;
            OamBridge.Log = logged.Add;
            try
            {
                var transport = new FakeTransport(message => null);
                using (var bridge = new OamBridge(transport))
                {
                    var heard = new List<object>();
                    bridge.NotificationReceived += (method, p) => heard.Add(p["v"]);
                    transport.Deliver("{\"jsonrpc\":\"2.0\",\"method\":\"x/y\",\"params\":{\"v\":NaN}}");
                    transport.Deliver("not json at all");
                    transport.Deliver("[1,2]");
                    transport.Deliver("{\"jsonrpc\":\"2.0\",\"method\":\"x/y\",\"params\":{\"v\":1}}");
                    Check.Equal(4, bridge.Pump());
                    Check.Equal(J.A(1L), heard);
                }
                Check.Equal(2, logged.Count(m => m.Contains("not strict JSON")), "two lines were logged as not strict JSON");
            }
            finally
            {
                OamBridge.Log = previous;
            }
        }

        [Test]
        public static void PumpRoutesAtMostMaxMessages()
        {
            var transport = new FakeTransport(message => null);
            using (var bridge = new OamBridge(transport))
            {
                var heard = new List<object>();
                bridge.NotificationReceived += (method, p) => heard.Add(p["n"]);
                for (int n = 0; n < 5; n++) transport.Deliver(J.O("jsonrpc", "2.0", "method", "x/y", "params", J.O("n", n)));
                Check.True(bridge.MessageAvailable.WaitOne(0), "MessageAvailable is set");
                Check.Equal(2, bridge.Pump(2));
                Check.Equal(J.A(0L, 1L), heard, "in order, two of them");
                Check.True(bridge.MessageAvailable.WaitOne(0), "still set while messages wait");
                Check.Equal(3, bridge.Pump());
                Check.True(!bridge.MessageAvailable.WaitOne(0), "reset once drained");
                Check.Equal(J.A(0L, 1L, 2L, 3L, 4L), heard);
            }
        }

        [Test]
        public static void EveryWrapperSendsTheDocumentedRequest()
        {
            var results = new Dictionary<string, object>
            {
                { "npc/create", J.O("npc", "gorm", "tools", J.A("check"), "warnings", J.A()) },
                { "npc/restore", J.O("npc", "gorm", "tools", J.A(), "warnings", J.A()) },
                { "npc/bark", J.O("npc", "gorm", "line", "Rain again.") },
                { "npc/state", J.O("npc", "gorm", "state", J.O("version", 1)) },
                { "npc/update", J.O("npc", "gorm", "warnings", J.A()) },
                { "npc/cancel", J.O("npc", "gorm", "cancelled", 2) },
                { "npc/list", J.O("npcs", J.A(J.O("npc", "gorm", "turnCount", 1, "world", "village"))) },
                { "decision/decide", J.O("optionID", "flee", "confidence", 75, "isFallback", false) },
                { "decision/decideMany", J.O("results", J.A(J.O("optionID", "x"), J.O("optionID", "y", "isFallback", true))) },
                { "content/generate", J.O("content", J.O("name", "Rusty Sword")) },
                { "world/create", J.O("world", "village", "version", 0) },
                { "world/get", J.O("world", "village", "path", "player.gold", "value", null, "exists", false, "version", 0) },
                { "world/set", J.O("version", 1) },
                { "world/merge", J.O("version", 2) },
                { "world/remove", J.O("removed", true, "oldValue", 60, "version", 3) },
                { "world/snapshot", J.O("state", J.O("player", J.O()), "version", 3) },
                { "world/list", J.O("worlds", J.A(J.O("world", "village"))) },
                { "session/create", J.O("session", "s1", "warnings", J.A("unknown option 'x'")) },
                { "session/cancel", J.O("cancelled", 1) },
                { "session/transcript", J.O("transcript", J.O("entries", J.A())) },
                { "session/compact", J.O("summary", "They talked.") },
            };
            var transport = new FakeTransport(message =>
            {
                object result;
                return new object[] { FakeTransport.ResultFor(message, results.TryGetValue((string)message["method"], out result) ? result : J.O()) };
            });
            using (var bridge = new OamBridge(transport))
            {
                bridge.RegisterTool("check", "Check something.", null, call => "ok", timeoutSeconds: 5);
                MainThread.Run(async () =>
                {
                    var npc = await bridge.CreateNpcAsync(J.O("name", "Gorm"), new object[] { "check" }, "village", J.O("replyFormat", "text"),
                        J.O("relationship", 10), "scripted", "gorm");
                    Check.Equal("gorm", npc.Id);
                    Check.Equal(J.A("check"), npc.Tools);
                    await bridge.RestoreNpcAsync(J.O("version", 1));
                    Check.Equal("Rain again.", await npc.BarkAsync("raining"));
                    Check.Equal(J.O("version", 1L), await npc.StateAsync(settle: false));
                    Check.Equal(J.A(), await npc.UpdateAsync(memory: J.O("relationship", 30, "summary", null)));
                    await npc.ResetAsync(clearMemory: true);
                    Check.Equal(2L, await npc.CancelAsync());
                    await npc.DeleteAsync();
                    Check.Equal(1L, (await bridge.ListNpcsAsync())[0]["turnCount"]);
                    var decision = await bridge.DecideAsync("A wolf appears.", new object[] { "fight", J.O("id", "flee", "description", "Run") },
                        "gorm", J.O("hp", 3), toolChoice: "none", fallbackOptionId: "flee", settings: J.O("temperature", 0));
                    Check.Equal("flee", decision["optionID"]);
                    var many = await bridge.DecideManyAsync(new object[] { J.O("situation", "a", "options", J.A("x")) }, 2, "scripted");
                    Check.Equal(true, many[1]["isFallback"]);
                    Check.Equal(J.O("name", "Rusty Sword"), await bridge.GenerateAsync("A sword.", J.O("type", "object"), "Short."));
                    var world = await bridge.CreateWorldAsync(J.O("player", J.O("gold", 60)), "village");
                    Check.Equal(null, await world.GetAsync("player.gold"));
                    Check.Equal(0L, await world.GetAsync("player.gold", 0L));
                    Check.Equal(1L, await world.SetAsync("player.gold", 45));
                    Check.Equal(2L, await world.MergeAsync(J.O("quests", J.O("main", "open"))));
                    Check.Equal(60L, await world.RemoveAsync("player.gold"));
                    Check.Equal(J.O("player", J.O()), await world.SnapshotAsync());
                    await world.DeleteAsync();
                    Check.Equal("village", (await bridge.ListWorldsAsync())[0]["world"]);
                    var session = await bridge.CreateSessionAsync("Be brief.", new object[] { "check" }, J.O("x", 1), "scripted", session: "s1");
                    Check.Equal(J.A("unknown option 'x'"), session.Warnings);
                    await session.RespondAsync("Hi", toolChoice: "check", policy: J.O("maxToolRounds", 2));
                    await session.RespondAsync("Hi", e => { }, toolChoice: "required");
                    Check.Equal(1L, await session.CancelAsync());
                    Check.Equal(J.O("entries", J.A()), await session.TranscriptAsync());
                    Check.Equal("They talked.", await session.CompactAsync());
                }, bridge);
                var check = J.O("name", "check", "description", "Check something.", "parameters", J.O("type", "object", "properties", J.O()),
                    "execution", "client", "timeoutSeconds", 5.0);
                var sent = transport.Sent.Select(m => J.A(m["method"], Json.Field(m, "params"))).ToList();
                Check.Equal(J.A(
                    J.A("npc/create", J.O("npc", "gorm", "persona", J.O("name", "Gorm"), "tools", J.A(check), "world", "village",
                        "options", J.O("replyFormat", "text"), "memory", J.O("relationship", 10), "model", "scripted")),
                    J.A("npc/restore", J.O("state", J.O("version", 1))),
                    J.A("npc/bark", J.O("npc", "gorm", "situation", "raining")),
                    J.A("npc/state", J.O("npc", "gorm", "settle", false)),
                    J.A("npc/update", J.O("npc", "gorm", "memory", J.O("relationship", 30, "summary", null))),
                    J.A("npc/reset", J.O("npc", "gorm", "clearMemory", true)),
                    J.A("npc/cancel", J.O("npc", "gorm")),
                    J.A("npc/delete", J.O("npc", "gorm")),
                    J.A("npc/list", null),
                    J.A("decision/decide", J.O("situation", "A wolf appears.", "options", J.A("fight", J.O("id", "flee", "description", "Run")),
                        "actor", "gorm", "context", J.O("hp", 3), "toolChoice", "none", "fallbackOptionID", "flee", "temperature", 0)),
                    J.A("decision/decideMany", J.O("requests", J.A(J.O("situation", "a", "options", J.A("x"))), "maxConcurrency", 2, "model", "scripted")),
                    J.A("content/generate", J.O("prompt", "A sword.", "schema", J.O("type", "object"), "instructions", "Short.")),
                    J.A("world/create", J.O("world", "village", "state", J.O("player", J.O("gold", 60)))),
                    J.A("world/get", J.O("world", "village", "path", "player.gold")),
                    J.A("world/get", J.O("world", "village", "path", "player.gold")),
                    J.A("world/set", J.O("world", "village", "path", "player.gold", "value", 45)),
                    J.A("world/merge", J.O("world", "village", "path", "", "patch", J.O("quests", J.O("main", "open")))),
                    J.A("world/remove", J.O("world", "village", "path", "player.gold")),
                    J.A("world/snapshot", J.O("world", "village")),
                    J.A("world/delete", J.O("world", "village")),
                    J.A("world/list", null),
                    J.A("session/create", J.O("session", "s1", "instructions", "Be brief.", "tools", J.A(check), "options", J.O("x", 1), "model", "scripted")),
                    J.A("session/respond", J.O("session", "s1", "prompt", "Hi", "stream", false, "toolChoice", J.O("tool", "check"), "maxToolRounds", 2)),
                    J.A("session/respond", J.O("session", "s1", "prompt", "Hi", "stream", true, "toolChoice", "required")),
                    J.A("session/cancel", J.O("session", "s1")),
                    J.A("session/transcript", J.O("session", "s1")),
                    J.A("session/compact", J.O("session", "s1", "keepRecentTurns", 2))), sent);
                Check.True(transport.Sent.All(m => ((string)m["id"]).StartsWith("cs-", StringComparison.Ordinal)), "ids are cs-<n>");
            }
        }

        [Test]
        public static void AnUnknownToolNameInParamsIsRefusedBeforeSending()
        {
            var transport = new FakeTransport(message => null);
            using (var bridge = new OamBridge(transport))
            {
                var error = MainThread.Run(() => Check.ThrowsAsync<ArgumentException>(() => bridge.CreateSessionAsync(tools: new object[] { "nope" }), "unknown"), bridge);
                Check.Contains("'nope'", error.Message);
                Check.Equal(0, transport.Sent.Count);
            }
        }

        [Test]
        public static void DisposeClosesTheTransportOnce()
        {
            var transport = new FakeTransport(message => null);
            var bridge = new OamBridge(transport);
            bridge.Dispose();
            bridge.Dispose();
            Check.Equal(1, transport.Closes);
            Check.Equal("shut_down", Check.Throws<OamException>(() => bridge.Notify("ping"), "after Dispose").Name);
        }

        [Test]
        public static void ToolChoiceHelper()
        {
            Check.Equal("auto", OamBridge.ToolChoice("auto"));
            Check.Equal("none", OamBridge.ToolChoice("none"));
            Check.Equal("required", OamBridge.ToolChoice("required"));
            Check.Equal(J.O("tool", "open_gate"), OamBridge.ToolChoice("open_gate"));
            Check.Equal(J.O("tool", "x"), OamBridge.ToolChoice(J.O("tool", "x")));
            Check.Equal(null, OamBridge.ToolChoice(null));
        }
    }
}
