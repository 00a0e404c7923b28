// Bad input that concerns the whole process (which library is loaded, whether a JVM can start, exiting without
// Dispose): each case runs in a child process of its own, so that the suite's own JVM is not involved, and the
// test checks that the child ends normally and says what went wrong.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Reflection;
using System.Threading.Tasks;
using OpenAppleModels;

namespace OpenAppleModels.Tests
{
    public static class Probes
    {
        public static int Run(string name)
        {
            try
            {
                switch (name)
                {
                    case "library-unavailable": return LibraryUnavailable();
                    case "no-jvm": return NoJvm();
                    case "exit-without-dispose": return ExitWithoutDispose();
                    default:
                        Console.WriteLine("probe: unknown case " + name);
                        return 2;
                }
            }
            catch (Exception e)
            {
                Console.WriteLine("probe: unexpected " + e);
                return 3;
            }
        }

        private static int LibraryUnavailable()
        {
            var version = Check.Throws<OamException>(() => { var v = OamBridge.Version; }, "Version");
            var create = Check.Throws<OamException>(() => new OamBridge(), "new OamBridge()");
            Console.WriteLine("probe: " + version.Name + " / " + create.Name + ": " + create.Message);
            return version.Name == "library_unavailable" && create.Name == "library_unavailable" ? 0 : 4;
        }

        private static int NoJvm()
        {
            var first = Check.Throws<OamException>(() => new OamBridge(), "first create");
            var second = Check.Throws<OamException>(() => new OamBridge(), "second create");
            Console.WriteLine("probe: " + first.Name + " / " + second.Name + ": " + first.Message);
            Console.WriteLine("probe: version still " + OamBridge.Version);
            return first.Name == "bridge_unavailable" && second.Name == "bridge_unavailable" ? 0 : 4;
        }

        /// <summary>A bridge with a turn in flight and a tool call open when Main returns: the exit hook disposes it.</summary>
        private static int ExitWithoutDispose()
        {
            var bridge = new OamBridge(dispatchOnCallbackThread: true);
            var entered = new TaskCompletionSource<bool>();
            bridge.RegisterTool("hold", "Never answers.", null, (ToolCall call, ToolReply reply) => entered.TrySetResult(true));
            bridge.CallBlocking("session/create", J.O("session", "s", "tools", bridge.ToolDefinitions("hold"),
                "model", J.Scripted(J.ToolCallStep("hold"), J.O("text", "never"))));
            var turn = bridge.Session("s").RespondAsync("x");
            if (!entered.Task.Wait(Suite.WaitSeconds * 1000)) return 5;
            Console.WriteLine("probe: leaving with the turn " + turn.Status);
            return 0;
        }

        /// <summary>Runs this test program with --probe name in a child process with these environment changes.</summary>
        public static ProbeRun Spawn(string name, IDictionary<string, string> environment, string workingDirectory = null)
        {
            var start = new ProcessStartInfo(Process.GetCurrentProcess().MainModule.FileName,
                "--debug \"" + Assembly.GetExecutingAssembly().Location + "\" --probe " + name)
            {
                UseShellExecute = false,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                WorkingDirectory = workingDirectory ?? Path.GetTempPath(),
            };
            foreach (var pair in environment)
            {
                if (pair.Value == null)
                    start.EnvironmentVariables.Remove(pair.Key);
                else
                    start.EnvironmentVariables[pair.Key] = pair.Value;
            }
            using (var process = Process.Start(start))
            {
                var stderr = process.StandardError.ReadToEndAsync();
                var stdout = process.StandardOutput.ReadToEnd();
                if (!process.WaitForExit(Suite.WaitSeconds * 1000))
                {
                    process.Kill();
                    throw new AssertionFailed("probe " + name + " hung");
                }
                return new ProbeRun { Exit = process.ExitCode, Out = stdout, Err = stderr.Result };
            }
        }
    }

    public sealed class ProbeRun
    {
        public int Exit;
        public string Out;
        public string Err;

        public override string ToString()
        {
            return "exit " + Exit + "\n--- stdout:\n" + Out + "\n--- stderr:\n" + Err;
        }
    }
}
