// OamEngineInstaller.cs: the Unity package's editor step that puts the engine where OamBridgeRunner looks for it.
// "Tools > oam > Install the engine from a release archive…" asks for an unpacked oam release archive (the folder
// oam-VERSION of oam-VERSION-linux-x86_64.tar.gz or oam-VERSION-windows-x86_64.zip) and copies its lib/oam.jar and
// its Java runtime (runtime/) into Assets/StreamingAssets/oam (oam.jar, runtime-linux-x86_64 or
// runtime-windows-x86_64). Run it once per system the game is built for. Install itself uses only System.IO, so the
// release check runs it outside Unity.
using System;
using System.IO;

namespace OpenAppleModels.Editor
{
    public static class OamEngineInstaller
    {
        /// <summary>Copies the engine of the unpacked release archive in archiveFolder into
        /// streamingAssets/oam; returns the runtime folder it wrote. ArgumentException naming what is missing.</summary>
        public static string Install(string archiveFolder, string streamingAssets)
        {
            string jar = Path.Combine(archiveFolder, Path.Combine("lib", "oam.jar"));
            string runtime = Path.Combine(archiveFolder, "runtime");
            if (!File.Exists(jar) || !File.Exists(Path.Combine(runtime, "release")))
                throw new ArgumentException(archiveFolder + " is not an unpacked oam release archive (no lib/oam.jar and runtime/)");
            string system;
            if (File.Exists(Path.Combine(runtime, Path.Combine("bin", "java.exe")))) system = "windows-x86_64";
            else if (File.Exists(Path.Combine(runtime, Path.Combine("lib", Path.Combine("server", "libjvm.so"))))) system = "linux-x86_64";
            else throw new ArgumentException(runtime + " is not a Linux or Windows x86_64 Java runtime (the package's library is built for those)");
            string target = Path.Combine(streamingAssets, "oam");
            Directory.CreateDirectory(target);
            File.Copy(jar, Path.Combine(target, "oam.jar"), true);
            string runtimeTarget = Path.Combine(target, "runtime-" + system);
            if (Directory.Exists(runtimeTarget)) Directory.Delete(runtimeTarget, true);
            Copy(runtime, runtimeTarget);
            return runtimeTarget;
        }

        private static void Copy(string from, string to)
        {
            Directory.CreateDirectory(to);
            foreach (string file in Directory.GetFiles(from))
            {
                string copy = Path.Combine(to, Path.GetFileName(file));
                File.Copy(file, copy, true);
                if (Environment.OSVersion.Platform != PlatformID.Win32NT) KeepExecutable(file, copy);
            }
            foreach (string folder in Directory.GetDirectories(from)) Copy(folder, Path.Combine(to, Path.GetFileName(folder)));
        }

        // File.Copy drops the executable bit on Mono and Unity's .NET: runtime/bin/java and the libraries keep it.
        private static void KeepExecutable(string source, string copy)
        {
            string name = Path.GetFileName(source);
            bool executable = Path.GetFileName(Path.GetDirectoryName(source)) == "bin" || name.EndsWith(".so") || name == "jspawnhelper";
            if (executable) Chmod(copy, Convert.ToInt32("755", 8));
        }

        [System.Runtime.InteropServices.DllImport("libc", EntryPoint = "chmod", SetLastError = true)]
        private static extern int Chmod(string path, int mode);

#if UNITY_EDITOR
        [UnityEditor.MenuItem("Tools/oam/Install the engine from a release archive…")]
        private static void InstallFromMenu()
        {
            string folder = UnityEditor.EditorUtility.OpenFolderPanel("The unpacked oam release archive (oam-VERSION)", "", "");
            if (string.IsNullOrEmpty(folder)) return;
            try
            {
                string runtime = Install(folder, UnityEngine.Application.streamingAssetsPath);
                UnityEditor.AssetDatabase.Refresh();
                UnityEngine.Debug.Log("oam: the engine is in " + runtime + " and StreamingAssets/oam/oam.jar");
            }
            catch (Exception e)
            {
                UnityEditor.EditorUtility.DisplayDialog("oam", e.Message, "OK");
            }
        }
#endif
    }
}
