# Sourced by bindings/csharp/run-tests (which the build runs). Makes sure Mono's C# compiler and runtime are
# there: mcs and mono, from the Debian packages mono-mcs, mono-runtime and mono-devel. Installs them with
# apt-get when they are missing and we may (root, apt-get present); otherwise says what to install. Installing
# happens once: later runs find the commands and do nothing. Progress and errors go to stderr.

OAM_MONO_PACKAGES="mono-mcs mono-runtime mono-devel"

oam_mono_present() {
  command -v mcs >/dev/null 2>&1 && command -v mono >/dev/null 2>&1 \
    && [ -f /usr/lib/mono/4.5/mscorlib.dll ] && [ -f /usr/lib/mono/4.5/System.Core.dll ]
}

oam_mono() { # returns 0 with mcs and mono on the PATH, or 1 with a message saying why not
  if oam_mono_present; then return 0; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "oam: Mono is missing; installing $OAM_MONO_PACKAGES with apt-get (once)" >&2
    if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $OAM_MONO_PACKAGES; } >&2; then
      echo "oam: apt-get could not install $OAM_MONO_PACKAGES (is the Debian mirror reachable?)." >&2
    fi
    if oam_mono_present; then return 0; fi
  fi
  {
    echo "oam: the C# binding's tests need Mono (mcs and mono), which is not installed."
    if [ "$(id -u)" != 0 ]; then
      echo "  Install it as root: apt-get install $OAM_MONO_PACKAGES (Debian, Ubuntu),"
    else
      echo "  Install it: apt-get install $OAM_MONO_PACKAGES (Debian, Ubuntu),"
    fi
    echo "  or Mono 6.8 or newer from https://www.mono-project.com, then run bin/test again."
  } >&2
  return 1
}
