// OamBridgeRunner.cs: the Unity side of the C# binding. A MonoBehaviour that owns one OamBridge, pumps it every
// frame on the main thread and disposes it with its GameObject. Outside Unity (UNITY_5_3_OR_NEWER undefined) this
// file compiles to nothing, so the same sources build with Mono's mcs and with .NET.
#if UNITY_5_3_OR_NEWER
using System;
using System.Collections.Generic;
using System.IO;
using UnityEngine;

namespace OpenAppleModels
{
    public sealed class OamBridgeRunner : MonoBehaviour
    {
        /// <summary>The folder of StreamingAssets that holds the engine: oam.jar and a Java runtime per system
        /// (runtime-linux-x86_64, runtime-windows-x86_64). The package's editor step "Tools > oam > Install the engine
        /// from a release archive…" fills it; Unity copies StreamingAssets into every build unchanged.</summary>
        public const string EngineFolder = "oam";

        /// <summary>How many messages one frame routes at most (the rest wait for the next frame).</summary>
        public int maxMessagesPerFrame = 256;

        public OamBridge Bridge { get; private set; }

        /// <summary>Makes a GameObject that survives scene loads, with a runner and its bridge, started with
        /// <see cref="EngineSettings"/> (the engine in StreamingAssets/oam when it is there). The first bridge of the
        /// process starts the JVM (a moment); OamException when the library or a JVM cannot be found.</summary>
        public static OamBridgeRunner Create(string name = "OamBridge")
        {
            return Create(name, null);
        }

        /// <summary>As <see cref="Create(string)"/>, with settings for the library (classPath, javaHome, jvmOptions,
        /// logLevel, model, …; see bindings/README.md). classPath and javaHome count only for the bridge that starts the
        /// JVM (the first of the process); those not given come from StreamingAssets/oam when it holds them.</summary>
        public static OamBridgeRunner Create(string name, IDictionary<string, object> settings)
        {
            var host = new GameObject(name);
            DontDestroyOnLoad(host);
            var runner = host.AddComponent<OamBridgeRunner>();
            try
            {
                runner.Bridge = new OamBridge(EngineSettings(settings));
            }
            catch
            {
                Destroy(host);
                throw;
            }
            return runner;
        }

        /// <summary>The settings a runner starts its bridge with: these, plus classPath =
        /// StreamingAssets/oam/oam.jar and javaHome = StreamingAssets/oam/runtime-SYSTEM when the settings do not name
        /// them and the files are there (SYSTEM: linux-x86_64 or windows-x86_64, this process's).</summary>
        public static Dictionary<string, object> EngineSettings(IDictionary<string, object> settings)
        {
            var result = settings == null ? new Dictionary<string, object>() : new Dictionary<string, object>(settings);
            string folder = Path.Combine(Application.streamingAssetsPath, EngineFolder);
            string jar = Path.Combine(folder, "oam.jar");
            if (!result.ContainsKey("classPath") && File.Exists(jar)) result["classPath"] = jar;
            string runtime = Path.Combine(folder, "runtime-" + SystemName);
            if (!result.ContainsKey("javaHome") && Directory.Exists(runtime)) result["javaHome"] = runtime;
            return result;
        }

        /// <summary>The name of this process's system in the release archives: linux-x86_64 or windows-x86_64 (the
        /// systems the package's library is built for).</summary>
        public static string SystemName
        {
            get { return Environment.OSVersion.Platform == PlatformID.Win32NT ? "windows-x86_64" : "linux-x86_64"; }
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
