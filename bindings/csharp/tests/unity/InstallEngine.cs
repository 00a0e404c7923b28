// Runs the Unity package's editor step outside Unity, as its menu item does after the folder dialog:
//
//   mono InstallEngine.exe UNPACKED_ARCHIVE_FOLDER STREAMING_ASSETS
using System;
using OpenAppleModels.Editor;

public static class InstallEngine
{
    public static int Main(string[] args)
    {
        Console.WriteLine("installed: " + OamEngineInstaller.Install(args[0], args[1]));
        return 0;
    }
}
