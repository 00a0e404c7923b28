// The C# binding's test program: runs every [Test] method of the suite and exits 1 if one fails (or none ran).
//
//   mono OpenAppleModelsTests.exe [name-filter]       the suite (needs libOpenAppleModelsFFI on the library path)
//   mono OpenAppleModelsTests.exe --probe <case>      one bad-input case in a process of its own (see Probes);
//                                                     the suite runs these as child processes
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Reflection;

namespace OpenAppleModels.Tests
{
    public static class Suite
    {
        /// <summary>The longest a test may wait for anything: a bound against hangs, not a speed check.</summary>
        public const int WaitSeconds = 90;

        public static int Main(string[] args)
        {
            if (args.Length == 2 && args[0] == "--probe") return Probes.Run(args[1]);
            string filter = args.Length > 0 ? args[0] : null;
            var tests = typeof(Suite).Assembly.GetTypes()
                .SelectMany(type => type.GetMethods(BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Static))
                .Where(method => method.GetCustomAttributes(typeof(TestAttribute), false).Length > 0)
                .Where(method => filter == null || (method.DeclaringType.Name + "." + method.Name).Contains(filter))
                .OrderBy(method => method.DeclaringType.Name + "." + method.Name, StringComparer.Ordinal)
                .ToList();
            int passed = 0;
            var failed = new List<string>();
            var all = Stopwatch.StartNew();
            foreach (var test in tests)
            {
                string name = test.DeclaringType.Name + "." + test.Name;
                var watch = Stopwatch.StartNew();
                try
                {
                    test.Invoke(null, null);
                    passed++;
                    Console.WriteLine("ok    " + name + " (" + watch.ElapsedMilliseconds + " ms)");
                }
                catch (TargetInvocationException e)
                {
                    failed.Add(name);
                    Console.WriteLine("FAIL  " + name + ": " + e.InnerException);
                }
                Console.Out.Flush();
            }
            Console.WriteLine();
            Console.WriteLine(passed + " passed, " + failed.Count + " failed, " + tests.Count + " tests in "
                + all.ElapsedMilliseconds / 1000.0 + " s");
            foreach (var name in failed) Console.WriteLine("failed: " + name);
            if (tests.Count == 0) Console.WriteLine("no test matched");
            return failed.Count == 0 && tests.Count > 0 ? 0 : 1;
        }
    }
}
