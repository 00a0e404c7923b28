# Sourced by bin/test; also run by oam-server's OpenAIPythonClientTest. Installs the official `openai`
# Python package (PyPI) into the project's cache folder, never into the user's Python, once; reruns
# reuse it offline. Prints the folder to put on PYTHONPATH on stdout, progress and errors on stderr.
#
#   oam_openai_python   the --target folder holding `openai` and its dependencies
. "$(dirname "${BASH_SOURCE[0]}")/real-models.sh"

OAM_OPENAI_PACKAGE="openai==3.51.0"

oam_openai_python() {
  local cache py target
  if [ -n "${OAM_OPENAI_PYTHONPATH:-}" ]; then printf '%s\n' "$OAM_OPENAI_PYTHONPATH"; return 0; fi
  cache=$(oam_cache_dir) || return 1
  py=$(oam_python) || return 1
  target="$cache/pypi/openai-${OAM_OPENAI_PACKAGE#*==}"
  if [ ! -f "$target/.complete" ]; then
    echo "oam: installing $OAM_OPENAI_PACKAGE from PyPI into $target (once)" >&2
    rm -rf "$target"
    if ! "$py" -m pip install --quiet --disable-pip-version-check --no-input --target "$target" "$OAM_OPENAI_PACKAGE" >&2; then
      echo "oam: could not install $OAM_OPENAI_PACKAGE from PyPI (is https://pypi.org reachable?)." >&2
      echo "     The Python client test needs it; set OAM_OPENAI_PYTHONPATH to a folder that has it." >&2
      rm -rf "$target"; return 1
    fi
    touch "$target/.complete"
  fi
  printf '%s\n' "$target"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  oam_openai_python
fi
