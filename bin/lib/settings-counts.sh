#!/usr/bin/env bash
# The three counts of docs/ARCHITECTURE.md's "Settings" section, over the product's Java sources (src/main of every
# module; tests may read the environment as they like):
#   1. Environment.system() calls outside the entry points (listed below: the programs' mains, the C library's entry,
#      the in-process builder and the ServiceLoader providers), which read the process's settings once and pass typed
#      records down;
#   2. lookup-function parameters (UnaryOperator<String> / UnaryOperator<@Nullable String>), the untyped way around
#      Environment;
#   3. "OAM_..." names spelled in more than one file (a name is spelled once: in its constants holder or the settings
#      record that parses it; others refer to the constant). bench/ counts here too.
# Usage: bin/lib/settings-counts.sh [--check]   (--check: exit 1 when any count is above 0; bin/test runs it so)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

# The entry points: where Environment.system() may be called.
ENTRY_POINTS=(
  oam-core/src/main/java/dev/oam/core/Environment.java
  oam-cli/src/main/java/dev/oam/cli/Main.java
  oam-ffi/src/main/java/dev/oam/ffi/NativeBridge.java
  oam-bridge/src/main/java/dev/oam/bridge/BridgeConfiguration.java
  oam-model-llama/src/main/java/dev/oam/model/llama/LlamaBackend.java
  oam-model-llama/src/main/java/dev/oam/model/llama/ModelHostMain.java
  oam-model-openai/src/main/java/dev/oam/model/openai/OpenAIBackend.java
  oam-model-openai/src/main/java/dev/oam/model/openai/LlamaServerBackend.java
)

product_sources() { # product modules (oam-*): their main Java sources, any release (java, java22, …)
  find oam-*/src/main -name '*.java' 2>/dev/null | sort
}
all_sources() { # the same and the benchmarks
  { product_sources; find bench/src/main -name '*.java' 2>/dev/null; } | sort
}

is_entry() {
  local f=$1 e
  for e in "${ENTRY_POINTS[@]}"; do [ "$f" = "$e" ] && return 0; done
  return 1
}

system_calls=()
while IFS= read -r f; do
  is_entry "$f" && continue
  while IFS= read -r hit; do system_calls+=("$f:$hit"); done < <(grep -nF 'Environment.system()' "$f" | cut -d: -f1)
done < <(product_sources)

lookups=()
while IFS= read -r f; do
  while IFS= read -r hit; do lookups+=("$f:$hit"); done \
    < <(grep -nE 'UnaryOperator<(@Nullable )?String>' "$f" | cut -d: -f1)
done < <(all_sources)

declare -A files_of=()
while IFS= read -r f; do
  for name in $(grep -ohE '"OAM_[A-Z0-9_]+"' "$f" | sort -u); do
    files_of[$name]+="$f "
  done
done < <(all_sources)
spelled_twice=()
for name in "${!files_of[@]}"; do
  read -r -a where <<< "${files_of[$name]}"
  if [ "${#where[@]}" -gt 1 ]; then spelled_twice+=("$name: ${where[*]}"); fi
done

echo "Environment.system() outside the entry points: ${#system_calls[@]}"
for x in "${system_calls[@]}"; do echo "  $x"; done
echo "lookup-function parameters (UnaryOperator<String>): ${#lookups[@]}"
for x in "${lookups[@]}"; do echo "  $x"; done
echo "OAM_ names spelled in more than one file: ${#spelled_twice[@]}"
for x in "${spelled_twice[@]}"; do echo "  $x"; done

if [ "${1:-}" = "--check" ] && [ $((${#system_calls[@]} + ${#lookups[@]} + ${#spelled_twice[@]})) -gt 0 ]; then
  echo "oam: settings go around the seam (docs/ARCHITECTURE.md, Settings): see the lines above" >&2
  exit 1
fi
