// A llama session on each real model through the library: Gemma 3 270M (OAM_TEST_GEMMA_MODEL) and
// SmolLM2-135M-Instruct with its own template (OAM_TEST_SMOLLM2_MODEL), which bin/test sets from
// bin/lib/real-models.sh, run in-process by llama.cpp inside the JVM the library starts. Asserts the protocol and the
// validity of what the model produced (and that the answer is text a game can show), never its wording.
using System;
using System.Collections.Generic;
using System.Linq;

namespace OpenAppleModels.Tests
{
    public static class RealModelTests
    {
        private static string Model(string variable, string function)
        {
            string path = Environment.GetEnvironmentVariable(variable);
            if (string.IsNullOrEmpty(path))
                throw new InvalidOperationException(variable + " is not set: bin/test sets it "
                    + "(or run: . bin/lib/real-models.sh; export " + variable + "=$(" + function + "))");
            return path;
        }

        [Test]
        public static void ALlamaSessionOnGemmaCallsAForcedToolWithValidArgumentsAndAnswers()
        {
            AForcedToolWithValidArgumentsAndAnAnswer(Model("OAM_TEST_GEMMA_MODEL", "oam_gemma_model"));
        }

        [Test]
        public static void ALlamaSessionOnSmolLM2CallsAForcedToolWithValidArgumentsAndAnswers()
        {
            AForcedToolWithValidArgumentsAndAnAnswer(Model("OAM_TEST_SMOLLM2_MODEL", "oam_smollm2_model"));
        }

        private static void AForcedToolWithValidArgumentsAndAnAnswer(string model)
        {
            using (var bridge = new OamBridge())
            {
                var calls = new List<ToolCall>();
                var parameters = J.O("type", "object",
                    "properties", J.O("gate", J.O("type", "string", "enum", J.A("north", "south")),
                        "delay_seconds", J.O("type", "integer", "minimum", 0, "maximum", 60)),
                    "required", J.A("gate", "delay_seconds"));
                bridge.RegisterTool("open_gate", "Open one of the castle's gates after a delay.", parameters, call =>
                {
                    calls.Add(call);
                    return J.O("opened", true);
                });
                var deltas = new List<string>();
                var result = MainThread.Run(async () =>
                {
                    var session = await bridge.CreateSessionAsync("You are the gate keeper. Use the tools to act.",
                        new object[] { "open_gate" },
                        J.O("toolChoice", "required", "maxToolRounds", 1, "maxResponseTokens", 12, "temperature", 0),
                        J.O("type", "llama", "path", model));
                    // A text event with isReset replaces what was shown (the bridge takes a prompt read back out of
                    // the answer); the others add their delta.
                    return await session.RespondAsync("Open the north gate in 5 seconds.", onEvent: e =>
                    {
                        if (OpenAppleModels.Json.Field(e, "type") as string != "text") return;
                        bool reset = OpenAppleModels.Json.Field(e, "isReset") is bool && (bool)OpenAppleModels.Json.Field(e, "isReset");
                        if (reset) deltas.Clear();
                        deltas.Add((reset ? OpenAppleModels.Json.Field(e, "text") : OpenAppleModels.Json.Field(e, "delta")) as string ?? "");
                    });
                }, bridge);

                Check.True(calls.Count >= 1, "the forced step called the tool");
                foreach (var call in calls)
                {
                    Check.Equal("open_gate", call.Name);
                    var names = call.Arguments.Keys.OrderBy(k => k, StringComparer.Ordinal).ToList();
                    Check.Equal(J.A("delay_seconds", "gate"), names.Cast<object>().ToList(), "the arguments' names");
                    Check.True(call.GetString("gate") == "north" || call.GetString("gate") == "south",
                        "gate is one of the enum's values: " + Check.Show(call.Arguments));
                    Check.True(call.Arguments["delay_seconds"] is long, "delay_seconds is an integer: " + Check.Show(call.Arguments));
                    long delay = call.GetLong("delay_seconds", -1);
                    Check.True(delay >= 0 && delay <= 60, "delay_seconds within the schema's bounds: " + delay);
                }
                var records = J.List(result["toolCalls"]);
                Check.Equal(calls.Count, records.Count, "one record per call");
                foreach (var record in records)
                    Check.Equal(J.O("opened", true), J.Obj(record)["output"]);
                Check.True(result["text"] is string, "the turn answered text");
                Check.Equal(result["text"], string.Concat(deltas), "the streamed deltas join to the text");
                string text = (string)result["text"];
                Check.True(!text.Contains("\uFFFD"), "the answer has no U+FFFD: " + text);
                Check.True(!text.Contains("{\"tool_calls\""), "the answer is no tool-call JSON: " + text);
                var usage = J.Obj(result["usage"]);
                Check.True((long)usage["outputTokens"] > 0, "the model produced tokens: " + Check.Show(usage));
            }
        }
    }
}
