// A stand-in for the few UnityEngine (and UnityEditor) types that OamBridgeRunner.cs, examples/GateKeeper.cs and
// Editor/OamEngineInstaller.cs use, with Unity's
// signatures, so that the build compiles them with UNITY_5_3_OR_NEWER defined (Unity itself cannot run here). It also
// plays them: UnityStandIn.Player runs frames as Unity's player loop does (Start, Update, coroutines, the main
// thread's SynchronizationContext), which tests/unity/PlaySample.cs uses to run the package's sample under Mono.
using System;
using System.Collections;
using System.Collections.Generic;
using System.Reflection;
using System.Threading;

namespace UnityEngine
{
    public class Object
    {
        public static void DontDestroyOnLoad(Object target) { }

        public static void Destroy(Object target)
        {
            var component = target as Component;
            if (component != null) UnityStandIn.Player.Remove(component);
            var host = target as GameObject;
            if (host != null) foreach (var each in host.components.ToArray()) UnityStandIn.Player.Remove(each);
        }
    }

    public class Component : Object
    {
        public GameObject gameObject { get; internal set; }
    }

    public class Behaviour : Component { }
    public sealed class Coroutine { }

    public class MonoBehaviour : Behaviour
    {
        public Coroutine StartCoroutine(IEnumerator routine)
        {
            UnityStandIn.Player.StartCoroutine(routine);
            return new Coroutine();
        }
    }

    public sealed class GameObject : Object
    {
        internal readonly List<Component> components = new List<Component>();
        public string name;

        public GameObject(string name) { this.name = name; }

        public T AddComponent<T>() where T : Component
        {
            var component = (T)Activator.CreateInstance(typeof(T), true);
            component.gameObject = this;
            components.Add(component);
            UnityStandIn.Player.Add(component);
            return component;
        }
    }

    public struct Vector3
    {
        public float x, y, z;
        public Vector3(float x, float y, float z) { this.x = x; this.y = y; this.z = z; }
        public static Vector3 up { get { return new Vector3(0, 1, 0); } }
        public static Vector3 operator *(Vector3 a, float d) { return new Vector3(a.x * d, a.y * d, a.z * d); }
        public static Vector3 operator +(Vector3 a, Vector3 b) { return new Vector3(a.x + b.x, a.y + b.y, a.z + b.z); }
    }

    public class Transform : Component
    {
        public Vector3 position { get; set; }
    }

    public static class Time
    {
        public static float deltaTime { get { return 0.016f; } }
    }

    public static class Application
    {
        /// <summary>In the stand-in: UnityStandIn.Player.StreamingAssets.</summary>
        public static string streamingAssetsPath { get { return UnityStandIn.Player.StreamingAssets; } }
    }

    public static class Debug
    {
        public static void Log(object message) { UnityStandIn.Player.Write("Log", message); }
        public static void LogWarning(object message) { UnityStandIn.Player.Write("Warning", message); }
        public static void LogError(object message) { UnityStandIn.Player.Write("Error", message); }
    }
}

namespace UnityStandIn
{
    using UnityEngine;

    /// <summary>Unity's player loop, reduced: each Frame() runs the Start of new behaviours, then Update, then one
    /// step of every coroutine, then the continuations posted to the main thread.</summary>
    public static class Player
    {
        public static string StreamingAssets = "StreamingAssets";
        public static readonly List<string> Logged = new List<string>();
        private static readonly List<Component> s_live = new List<Component>();
        private static readonly List<Component> s_unstarted = new List<Component>();
        private static readonly List<IEnumerator> s_coroutines = new List<IEnumerator>();
        private static readonly FrameContext s_context = new FrameContext();
        private const BindingFlags Any = BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic;

        /// <summary>Makes the calling thread Unity's main thread (await resumes there, during a frame).</summary>
        public static void BecomeMainThread() { SynchronizationContext.SetSynchronizationContext(s_context); }

        internal static void Add(Component component) { s_live.Add(component); s_unstarted.Add(component); }

        internal static void Remove(Component component)
        {
            if (s_live.Remove(component)) Call(component, "OnDestroy");
            s_unstarted.Remove(component);
        }

        internal static void StartCoroutine(IEnumerator routine) { if (routine.MoveNext()) s_coroutines.Add(routine); }

        internal static void Write(string level, object message)
        {
            string text = level + ": " + message;
            lock (Logged) Logged.Add(text);
            Console.WriteLine(text);
        }

        public static void Frame()
        {
            foreach (var component in s_unstarted.ToArray()) { s_unstarted.Remove(component); Call(component, "Start"); }
            foreach (var component in s_live.ToArray()) Call(component, "Update");
            foreach (var routine in s_coroutines.ToArray()) if (!routine.MoveNext()) s_coroutines.Remove(routine);
            s_context.RunPosted();
        }

        /// <summary>As Unity when the player quits: OnApplicationQuit, then OnDestroy, of every live behaviour.</summary>
        public static void Quit()
        {
            foreach (var component in s_live.ToArray()) Call(component, "OnApplicationQuit");
            foreach (var component in s_live.ToArray()) Remove(component);
        }

        private static void Call(Component component, string message)
        {
            var method = component.GetType().GetMethod(message, Any, null, Type.EmptyTypes, null);
            if (method != null) method.Invoke(component, null);
        }

        private sealed class FrameContext : SynchronizationContext
        {
            private readonly Queue<KeyValuePair<SendOrPostCallback, object>> _posted = new Queue<KeyValuePair<SendOrPostCallback, object>>();

            public override void Post(SendOrPostCallback callback, object state)
            {
                lock (_posted) _posted.Enqueue(new KeyValuePair<SendOrPostCallback, object>(callback, state));
            }

            public override void Send(SendOrPostCallback callback, object state) { throw new NotSupportedException(); }

            public override SynchronizationContext CreateCopy() { return this; }

            internal void RunPosted()
            {
                while (true)
                {
                    KeyValuePair<SendOrPostCallback, object> next;
                    lock (_posted)
                    {
                        if (_posted.Count == 0) return;
                        next = _posted.Dequeue();
                    }
                    next.Key(next.Value);
                }
            }
        }
    }
}

namespace UnityEditor
{
    // What the package's editor step (Editor/OamEngineInstaller.cs) uses, so that it compiles with UNITY_EDITOR.
    [AttributeUsage(AttributeTargets.Method)]
    public sealed class MenuItemAttribute : Attribute
    {
        public MenuItemAttribute(string itemName) { }
    }

    public static class EditorUtility
    {
        public static string OpenFolderPanel(string title, string folder, string defaultName) { return ""; }
        public static bool DisplayDialog(string title, string message, string ok) { return true; }
    }

    public static class AssetDatabase
    {
        public static void Refresh() { }
    }
}

namespace AOT
{
    [AttributeUsage(AttributeTargets.Method)]
    public sealed class MonoPInvokeCallbackAttribute : Attribute
    {
        public MonoPInvokeCallbackAttribute(Type type) { }
    }
}
