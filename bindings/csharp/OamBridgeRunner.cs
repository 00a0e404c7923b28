// OamBridgeRunner.cs: the Unity side of the C# binding. A MonoBehaviour that owns one OamBridge, pumps it every
// frame on the main thread and disposes it with its GameObject. Outside Unity (UNITY_5_3_OR_NEWER undefined) this
// file compiles to nothing, so the same sources build with Mono's mcs and with .NET.
#if UNITY_5_3_OR_NEWER
using UnityEngine;

namespace OpenAppleModels
{
    public sealed class OamBridgeRunner : MonoBehaviour
    {
        /// <summary>How many messages one frame routes at most (the rest wait for the next frame).</summary>
        public int maxMessagesPerFrame = 256;

        public OamBridge Bridge { get; private set; }

        /// <summary>Makes a GameObject that survives scene loads, with a runner and its bridge. The first bridge of
        /// the process starts the JVM (a moment); OamException when the library or a JVM cannot be found.</summary>
        public static OamBridgeRunner Create(string name = "OamBridge")
        {
            var host = new GameObject(name);
            DontDestroyOnLoad(host);
            var runner = host.AddComponent<OamBridgeRunner>();
            try
            {
                runner.Bridge = new OamBridge();
            }
            catch
            {
                Destroy(host);
                throw;
            }
            return runner;
        }

        private void Update()
        {
            if (Bridge != null) Bridge.Pump(maxMessagesPerFrame);
        }

        private void OnApplicationQuit()
        {
            Shutdown();
        }

        private void OnDestroy()
        {
            Shutdown();
        }

        private void Shutdown()
        {
            var bridge = Bridge;
            Bridge = null;
            if (bridge != null) bridge.Dispose();
        }
    }
}
#endif
