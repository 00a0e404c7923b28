# Sourced by bin/release: the llama.cpp that each release archive carries in lib/llama/, from node-llama-cpp's
# prebuilt packages on npm (MIT), each pinned by the SHA-256 of its npm tarball. The FFM engine finds lib/llama/
# next to oam.jar and loads it by default (LlamaBuilds.bundled): no source build, no download at run time.
#
#   platform        npm package                               llama.cpp    backends in the folder
#   linux-x86_64    @node-llama-cpp/linux-x64-vulkan@3.22.1   v0.5.0       CPU (every x86-64 level) + Vulkan module
#   linux-aarch64   @node-llama-cpp/linux-arm64@3.22.1        v0.5.0       CPU (armv8.0 .. armv9.2)
#   windows-x86_64  @node-llama-cpp/win-x64-vulkan@3.21.1     v0.4.0       CPU (every x86-64 level) + Vulkan module
#   macos-arm64     @node-llama-cpp/mac-arm64-metal@3.21.1    v0.4.0       CPU (Apple M1..M4) + Metal
#   macos-x86_64    @node-llama-cpp/mac-x64@3.21.1            v0.4.0       CPU (every x86-64 level)
#
# Windows and macOS come from 3.21.1 because node-llama-cpp 3.22.1 names but never published those packages. The
# two releases' llama.h differ by additions only (a vocabulary type, one function), no struct or signature the
# engine uses (docs/MODELS.md, "Which path runs where"); the Linux x64 CPU package of 3.21.1 runs the FFM tests.
# CUDA is not bundled: node-llama-cpp's CUDA module alone is 159 MB (Linux) / 145 MB (Windows) and needs NVIDIA's
# driver and CUDA 13 runtime; `oam pull runtime:cuda` fetches it on demand (NpmRuntime pins the same releases).
#
# Each folder holds the package's libraries (not its Node addon or llama-common, which libllama does not need), its
# LICENSE, oam-build.properties (source, sha256, backend, library: the file to load, what the engine checks) and
# files.sha256 (the SHA-256 of every file, checked by the engine before it loads any).

OAM_NLC_PACKAGES="linux-x86_64:@node-llama-cpp/linux-x64-vulkan@3.22.1:e10577190fc4bd1649d3b655588e5c7a85fc6b6dbf7136fee596cbe9e25521e7:vulkan
linux-aarch64:@node-llama-cpp/linux-arm64@3.22.1:39c76b998e35ed2f236c01472fc79eda0fc558b1c8b535023c2d7ded8c327cc4:cpu
windows-x86_64:@node-llama-cpp/win-x64-vulkan@3.21.1:105e8207d2114f5f248b217fee7f9b702d0e7509cf0d3c7565dfb9e707f9303e:vulkan
macos-arm64:@node-llama-cpp/mac-arm64-metal@3.21.1:cd11a52fab1935fde5abd221b5ecf8167686b45e386b6a02df49cb9b2814e9d6:metal
macos-x86_64:@node-llama-cpp/mac-x64@3.21.1:3bcc6b2d6d3618098a36c9c01ae3afff1599f336a826cd54b1a55a73ed2159a7:cpu"

# Prints the npm tarball of one package, downloaded once into the project's cache and checked against its SHA-256.
# $1 = package@version, $2 = SHA-256; a message and status 1 when it cannot be had or does not match.
oam_nlc_tarball() {
  local package="$1" want="$2" cache name tgz sum
  cache="${OAM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/oam}/npm"
  name="${package#@}"; name="${name//\//-}"; name="${name/@/-}.tgz" # @a/b@1.2 -> a-b-1.2.tgz, npm pack's name
  tgz="$cache/$name"
  if [ ! -f "$tgz" ]; then
    command -v npm >/dev/null 2>&1 || { echo "oam: npm is needed to download $package (apt-get install npm)" >&2; return 1; }
    mkdir -p "$cache" && echo "oam: downloading $package from npm (once, into $cache)" >&2
    (cd "$cache" && npm pack --silent "$package" >/dev/null) || {
      echo "oam: could not download $package with npm (is the npm registry reachable?)" >&2; rm -f "$tgz"; return 1; }
  fi
  sum=$(sha256sum "$tgz" | cut -d' ' -f1)
  if [ "$sum" != "$want" ]; then
    echo "oam: $tgz has SHA-256 $sum, not $want; deleted (run again to download it again)" >&2
    rm -f "$tgz"; return 1
  fi
  printf '%s\n' "$tgz"
}

# Writes platform $1's llama.cpp into folder $2 (created; emptied first). Status 1 with a message on failure.
oam_llama_natives() {
  local platform="$1" dest="$2" line package sum backend tgz unpack library
  line=$(printf '%s\n' "$OAM_NLC_PACKAGES" | grep "^$platform:") || {
    echo "oam: no bundled llama.cpp for $platform" >&2; return 1; }
  package=$(echo "$line" | cut -d: -f2); sum=$(echo "$line" | cut -d: -f3); backend=$(echo "$line" | cut -d: -f4)
  tgz=$(oam_nlc_tarball "$package" "$sum") || return 1
  unpack=$(mktemp -d) || return 1
  tar -xzf "$tgz" -C "$unpack" || { rm -rf "$unpack"; return 1; }
  rm -rf "$dest" && mkdir -p "$dest" || return 1
  (cd "$unpack"/package/bins/* && for file in *; do
     case "$file" in llama-addon.*|_nlcBuildMetadata.json|libllama-common.*|llama-common.*) ;; *) cp "$file" "$dest/" ;; esac
   done) || { rm -rf "$unpack"; return 1; }
  cp "$unpack/package/LICENSE" "$dest/LICENSE.node-llama-cpp"
  rm -rf "$unpack"
  library=""
  for file in "$dest"/libllama.*.so "$dest"/libllama.*.dylib "$dest"/llama.*.dll; do
    [ -f "$file" ] && library="${file##*/}"
  done
  [ -n "$library" ] || { echo "oam: $package has no libllama" >&2; return 1; }
  printf 'source=%s\nsha256=%s\nrecipe=1\nbackend=%s\nlibrary=%s\npackage=%s\n' "$(basename "$tgz")" "$sum" "$backend" \
    "$library" "$package" > "$dest/oam-build.properties"
  # the SHA-256 of every file: the engine checks each one before it loads any (NativeFiles)
  (cd "$dest" && sha256sum -- * > files.sha256.tmp && mv files.sha256.tmp files.sha256)
}

# dist/maven/dev/oam/oam-llama-natives/VERSION/: one jar per platform (classifier linux-x86_64, linux-aarch64,
# windows-x86_64, macos-arm64, macos-x86_64) holding dev/oam/llama/natives/<platform>/ (the same files as the archive's lib/llama,
# with their files.sha256), and a pom; the BOM names each. The FFM engine finds the folder on the class path and extracts
# it once into the project's cache (ClassPathNatives). $1 = dist/maven, $2 = version, $3 = a scratch folder.
oam_llama_natives_maven() {
  local repo="$1" version="$2" scratch="$3" line platform folder jar target
  target="$repo/dev/oam/oam-llama-natives/$version"
  mkdir -p "$target" || return 1
  while IFS= read -r line; do
    platform="${line%%:*}"
    folder="$scratch/$platform/dev/oam/llama/natives/$platform"
    oam_llama_natives "$platform" "$folder" || return 1
    jar="$target/oam-llama-natives-$version-$platform.jar"
    rm -f "$jar"
    (cd "$scratch/$platform" && python3 -c '
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\nAutomatic-Module-Name: dev.oam.llama.natives\r\n\r\n")
    for base, dirs, files in os.walk("dev"):
        dirs.sort()
        for name in sorted(files):
            z.write(os.path.join(base, name))
' "$jar") || return 1
  done <<< "$OAM_NLC_PACKAGES"
  cat > "$target/oam-llama-natives-$version.pom" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.oam</groupId>
  <artifactId>oam-llama-natives</artifactId>
  <version>$version</version>
  <name>oam llama.cpp natives</name>
  <description>llama.cpp for oam's FFM engine, one jar per platform (classifiers linux-x86_64, linux-aarch64, windows-x86_64, macos-arm64, macos-x86_64): node-llama-cpp's prebuilt libraries (MIT).</description>
  <licenses><license><name>MIT</name></license></licenses>
</project>
POM
  (cd "$target" && for file in *.jar *.pom; do sha1sum "$file" | cut -d' ' -f1 > "$file.sha1"; md5sum "$file" | cut -d' ' -f1 > "$file.md5"; done)
}
