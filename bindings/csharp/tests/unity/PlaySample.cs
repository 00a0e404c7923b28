// Plays the Unity package's GateKeeper sample as a game that imported the package would, under Mono with the
// UnityEngine stand-in: a GameObject with a GateKeeper whose Start makes the bridge with OamBridgeRunner.Create()
// (the engine from StreamingAssets/oam, where the package's editor step put it), frames that pump it, the open_gate
// tool answered from a coroutine, and the guard's answer logged. The release check runs it on a real model.
//
//   mono PlaySample.exe STREAMING_ASSETS [MODEL.gguf]
//
// Exits 0 once "Guard: <text>" was logged, 1 when the sample failed or logged nothing within five minutes.
using System;
using System.Diagnostics;
using System.Linq;
using System.Threading;
using UnityEngine;
using UnityStandIn;

public static class PlaySample
{
    public static int Main(string[] args)
    {
        Player.StreamingAssets = args[0];
        Player.BecomeMainThread();
        var host = new GameObject("Gate");
        var gate = host.AddComponent<Transform>();
        var keeper = host.AddComponent<GateKeeper>();
        keeper.gate = gate;
        keeper.modelPath = args.Length > 1 ? args[1] : "";
        var clock = Stopwatch.StartNew();
        string answer = null;
        while (answer == null && clock.Elapsed < TimeSpan.FromMinutes(5))
        {
            Player.Frame();   // an exception of the sample's Start (async void) surfaces here
            lock (Player.Logged) answer = Player.Logged.FirstOrDefault(line => line.StartsWith("Log: Guard: "));
            Thread.Sleep(16); // a frame
        }
        Player.Quit();        // OnApplicationQuit / OnDestroy: the runner disposes its bridge
        if (answer == null || answer.Substring("Log: Guard: ".Length).Trim().Length == 0)
        {
            Console.Error.WriteLine("the sample logged no answer from the guard");
            return 1;
        }
        Console.WriteLine("sample: " + answer.Substring("Log: ".Length) + " (the gate rose " + gate.position.y.ToString("0.00") + ")");
        return 0;
    }
}
