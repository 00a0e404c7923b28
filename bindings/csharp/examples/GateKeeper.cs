using OpenAppleModels;
using UnityEngine;

public class GateKeeper : MonoBehaviour
{
    public Transform gate;                 // the gate to raise
    public string modelPath = "";          // a .gguf file; empty: the bridge's system model

    async void Start()
    {
        var bridge = OamBridgeRunner.Create().Bridge;   // pumped every frame, disposed with its GameObject
        bridge.RegisterTool("open_gate", "Open the castle gate.", null,
            (ToolCall call, ToolReply reply) => StartCoroutine(Raise(reply)));   // answered when the gate is up
        var model = modelPath == "" ? null : new { type = "llama", path = modelPath };
        var guard = await bridge.CreateSessionAsync("You guard the castle gate.", new object[] { "open_gate" }, model: model);
        var result = await guard.RespondAsync("Open the gate, please!", onText: delta => Debug.Log(delta));
        Debug.Log("Guard: " + result["text"]);
    }

    System.Collections.IEnumerator Raise(ToolReply reply)
    {
        for (float t = 0; t < 2 && !reply.IsCancelled; t += Time.deltaTime) { gate.position += Vector3.up * Time.deltaTime; yield return null; }
        reply.Ok(new { opened = !reply.IsCancelled });
    }
}
