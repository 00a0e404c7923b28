# Sourced by the terminal tests of oam chat (oam-cli ChatCommandIT). Makes sure tmux is there, from the Debian
# package tmux: installs it with apt-get when it is missing and we may (root, apt-get present); otherwise says
# what to install. Installing happens once: later runs find the command and do nothing. Messages go to stderr.

oam_tmux() { # returns 0 with tmux on the PATH, or 1 with a message saying why not
  if command -v tmux >/dev/null 2>&1; then return 0; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "oam: tmux is missing; installing it with apt-get (once)" >&2
    if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q tmux; } >&2; then
      echo "oam: apt-get could not install tmux (is the Debian mirror reachable?)." >&2
    fi
    if command -v tmux >/dev/null 2>&1; then return 0; fi
  fi
  echo "oam: the oam chat terminal tests need tmux; install it (apt-get install tmux on Debian and Ubuntu)." >&2
  return 1
}
