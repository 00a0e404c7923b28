// A small test kit for the C# binding's suite (Mono has no test framework installed by default, and the suite
// must run on a fresh machine with nothing but mono-devel): [Test] methods, assertions, a Unity-like main thread,
// and transports that record or script what the bridge sees.
using System;
using System.Collections;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using OpenAppleModels;

namespace OpenAppleModels.Tests
{
    [AttributeUsage(AttributeTargets.Method)]
    public sealed class TestAttribute : Attribute { }

    public sealed class AssertionFailed : Exception
    {
        public AssertionFailed(string message) : base(message) { }
    }

    public static class Check
    {
        public static void True(bool condition, string what)
        {
            if (!condition) throw new AssertionFailed(what);
        }

        public static void Equal(object expected, object actual, string what = null)
        {
            if (!Same(expected, actual))
                throw new AssertionFailed((what == null ? "" : what + ": ") + "expected " + Show(expected) + " but was " + Show(actual));
        }

        public static void Contains(string part, string text, string what = null)
        {
            if (text == null || text.IndexOf(part, StringComparison.Ordinal) < 0)
                throw new AssertionFailed((what == null ? "" : what + ": ") + "expected " + Show(text) + " to contain " + Show(part));
        }

        public static string Show(object value)
        {
            try
            {
                return Json.Serialize(value);
            }
            catch (Exception)
            {
                return value == null ? "null" : value.GetType().Name + ":" + value;
            }
        }

        /// <summary>JSON-like equality: objects by keys, lists in order, integers and doubles by value.</summary>
        public static bool Same(object a, object b)
        {
            if (a == null || b == null) return a == null && b == null;
            if (IsNumber(a) && IsNumber(b)) return Convert.ToDouble(a, CultureInfo.InvariantCulture) == Convert.ToDouble(b, CultureInfo.InvariantCulture);
            var da = a as IDictionary;
            var db = b as IDictionary;
            if (da != null || db != null)
            {
                if (da == null || db == null || da.Count != db.Count) return false;
                foreach (DictionaryEntry entry in da)
                    if (!db.Contains(entry.Key) || !Same(entry.Value, db[entry.Key])) return false;
                return true;
            }
            if (!(a is string) && !(b is string) && a is IEnumerable && b is IEnumerable)
            {
                var la = ((IEnumerable)a).Cast<object>().ToList();
                var lb = ((IEnumerable)b).Cast<object>().ToList();
                if (la.Count != lb.Count) return false;
                for (int i = 0; i < la.Count; i++)
                    if (!Same(la[i], lb[i])) return false;
                return true;
            }
            return a.Equals(b);
        }

        private static bool IsNumber(object value)
        {
            return value is long || value is int || value is double || value is float || value is decimal || value is short;
        }

        public static T Throws<T>(Action action, string what) where T : Exception
        {
            try
            {
                action();
            }
            catch (T e)
            {
                return e;
            }
            catch (Exception e)
            {
                throw new AssertionFailed(what + ": expected " + typeof(T).Name + " but got " + e);
            }
            throw new AssertionFailed(what + ": expected " + typeof(T).Name + ", nothing was thrown");
        }

        public static async Task<T> ThrowsAsync<T>(Func<Task> action, string what) where T : Exception
        {
            try
            {
                await action();
            }
            catch (T e)
            {
                return e;
            }
            catch (Exception e)
            {
                throw new AssertionFailed(what + ": expected " + typeof(T).Name + " but got " + e);
            }
            throw new AssertionFailed(what + ": expected " + typeof(T).Name + ", nothing was thrown");
        }
    }

    /// <summary>What Unity gives scripts: one main thread whose SynchronizationContext runs awaited continuations.</summary>
    public sealed class MainThread : SynchronizationContext
    {
        private readonly ConcurrentQueue<KeyValuePair<SendOrPostCallback, object>> _work =
            new ConcurrentQueue<KeyValuePair<SendOrPostCallback, object>>();
        private readonly AutoResetEvent _posted = new AutoResetEvent(false);
        public readonly int ThreadId = Thread.CurrentThread.ManagedThreadId;

        public static bool IsCurrent
        {
            get
            {
                var context = Current as MainThread;
                return context != null && context.ThreadId == Thread.CurrentThread.ManagedThreadId;
            }
        }

        public override void Post(SendOrPostCallback callback, object state)
        {
            _work.Enqueue(new KeyValuePair<SendOrPostCallback, object>(callback, state));
            _posted.Set();
        }

        public override void Send(SendOrPostCallback callback, object state)
        {
            if (Thread.CurrentThread.ManagedThreadId == ThreadId)
            {
                callback(state);
                return;
            }
            using (var done = new ManualResetEventSlim())
            {
                Post(s => { callback(s); done.Set(); }, state);
                done.Wait();
            }
        }

        public override SynchronizationContext CreateCopy() { return this; }

        public WaitHandle Posted { get { return _posted; } }

        public int RunPending()
        {
            // Only what was posted before this call, like one frame: work that posts more runs next time.
            int count = 0, due = _work.Count;
            KeyValuePair<SendOrPostCallback, object> item;
            while (count < due && _work.TryDequeue(out item))
            {
                item.Key(item.Value);
                count++;
            }
            return count;
        }

        /// <summary>
        /// Runs body on a fresh main thread (this thread), like Unity frames: awaited continuations come back here,
        /// and the bridges are pumped here. Waits on events, never on time; the bound only keeps a bug from hanging
        /// the build.
        /// </summary>
        public static T Run<T>(Func<Task<T>> body, params OamBridge[] bridges)
        {
            var previous = Current;
            var main = new MainThread();
            SetSynchronizationContext(main);
            try
            {
                var task = body();
                var deadline = DateTime.UtcNow.AddSeconds(Suite.WaitSeconds);
                while (true)
                {
                    main.RunPending();
                    foreach (var bridge in bridges) bridge.Pump();
                    if (task.IsCompleted && main._work.IsEmpty) break;
                    var handles = new List<WaitHandle> { main.Posted, ((IAsyncResult)task).AsyncWaitHandle };
                    foreach (var bridge in bridges)
                        if (!bridge.IsDisposed) handles.Add(bridge.MessageAvailable);
                    var left = deadline - DateTime.UtcNow;
                    if (left <= TimeSpan.Zero || WaitHandle.WaitAny(handles.ToArray(), left) == WaitHandle.WaitTimeout)
                        throw new AssertionFailed("the test did not finish within " + Suite.WaitSeconds + " s (a hang)");
                }
                return task.GetAwaiter().GetResult();
            }
            finally
            {
                SetSynchronizationContext(previous);
            }
        }

        public static void Run(Func<Task> body, params OamBridge[] bridges)
        {
            Run<bool>(async () => { await body(); return true; }, bridges);
        }
    }

    /// <summary>Passes everything to an inner transport and records the lines both ways.</summary>
    public sealed class RecordingTransport : IOamTransport
    {
        private readonly IOamTransport _inner;
        public readonly ConcurrentQueue<string> Sent = new ConcurrentQueue<string>();
        public readonly ConcurrentQueue<string> Received = new ConcurrentQueue<string>();

        public RecordingTransport(IOamTransport inner) { _inner = inner; }

        public void Start(Action<string> onLine)
        {
            _inner.Start(line => { Received.Enqueue(line); onLine(line); });
        }

        public int Send(string line)
        {
            Sent.Enqueue(line);
            return _inner.Send(line);
        }

        public string CallBlocking(string line, int timeoutMs)
        {
            Sent.Enqueue(line);
            var answer = _inner.CallBlocking(line, timeoutMs);
            if (answer != null) Received.Enqueue(answer);
            return answer;
        }

        public void Close() { _inner.Close(); }

        public List<Dictionary<string, object>> SentMessages()
        {
            return Sent.Select(line => (Dictionary<string, object>)Json.Parse(line)).ToList();
        }

        public List<Dictionary<string, object>> ReceivedMessages()
        {
            return Received.Select(line => (Dictionary<string, object>)Json.Parse(line)).ToList();
        }
    }

    /// <summary>Answers like a bridge would, synchronously from Send; records what was sent. For what a real bridge
    /// cannot produce (garbage lines, requests other than tool/call, exact wire shapes).</summary>
    public sealed class FakeTransport : IOamTransport
    {
        private readonly Func<Dictionary<string, object>, IEnumerable<object>> _answer;
        private Action<string> _onLine;
        public readonly List<Dictionary<string, object>> Sent = new List<Dictionary<string, object>>();
        public int Closes;

        public FakeTransport(Func<Dictionary<string, object>, IEnumerable<object>> answer) { _answer = answer; }

        public void Start(Action<string> onLine) { _onLine = onLine; }

        public void Deliver(object message) { _onLine(message as string ?? Json.Serialize(message)); }

        public int Send(string line)
        {
            var message = (Dictionary<string, object>)Json.Parse(line);
            lock (Sent) Sent.Add(message);
            foreach (var reply in _answer(message) ?? new object[0]) Deliver(reply);
            return Native.Ok;
        }

        public string CallBlocking(string line, int timeoutMs)
        {
            var message = (Dictionary<string, object>)Json.Parse(line);
            lock (Sent) Sent.Add(message);
            var replies = (_answer(message) ?? new object[0]).ToList();
            return replies.Count == 0 ? null : Json.Serialize(replies[replies.Count - 1]);
        }

        public void Close() { Closes++; }

        public static Dictionary<string, object> ResultFor(Dictionary<string, object> message, object result)
        {
            return new Dictionary<string, object> { { "jsonrpc", "2.0" }, { "id", message["id"] }, { "result", result } };
        }
    }

    /// <summary>Threads of this process (Linux: /proc/self/task), and how many carry an "oam-" name.</summary>
    public static class ThreadCensus
    {
        public static int Total() { return Directory.GetDirectories("/proc/self/task").Length; }

        public static int NamedOam()
        {
            int count = 0;
            foreach (var task in Directory.GetDirectories("/proc/self/task"))
            {
                try
                {
                    if (File.ReadAllText(Path.Combine(task, "comm")).StartsWith("oam-", StringComparison.Ordinal)) count++;
                }
                catch (IOException)
                {
                    // the thread ended meanwhile
                }
            }
            return count;
        }
    }

    /// <summary>JSON literals for the tests, written as C# objects.</summary>
    public static class J
    {
        public static Dictionary<string, object> O(params object[] pairs)
        {
            var result = new Dictionary<string, object>();
            for (int i = 0; i + 1 < pairs.Length; i += 2) result[(string)pairs[i]] = pairs[i + 1];
            return result;
        }

        public static List<object> A(params object[] items) { return new List<object>(items); }

        public static Dictionary<string, object> Scripted(params object[] steps)
        {
            return O("type", "scripted", "steps", A(steps));
        }

        public static Dictionary<string, object> ToolCallStep(string name, Dictionary<string, object> arguments = null)
        {
            return O("toolCalls", A(O("name", name, "arguments", arguments ?? O())));
        }

        public static Dictionary<string, object> Obj(object value) { return (Dictionary<string, object>)value; }
        public static List<object> List(object value) { return (List<object>)value; }
    }
}
