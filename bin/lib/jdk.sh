# Sourced by bin/oam, bin/test and bench/run. Finds a JDK >= 21 and Maven.
# Sets OAM_JDK (the JDK's home) or exits with a clear message. Prints nothing on stdout.

oam_java_major() { # $1 = a JDK home; prints its feature version, or nothing
  local home="$1" v=""
  [ -x "$home/bin/java" ] || return 0
  if [ -f "$home/release" ]; then
    v=$(sed -n 's/^JAVA_VERSION="\([0-9][0-9]*\).*/\1/p' "$home/release" | head -n 1)
  fi
  if [ -z "$v" ]; then
    v=$("$home/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9][0-9]*\).*/\1/p' | head -n 1)
  fi
  [ "$v" = "1" ] && v=8
  printf '%s' "$v"
}

oam_find_jdk() { # sets OAM_JDK
  local need_javac="${1:-}" best="" best_v=0 cand v
  if [ -n "${JAVA_HOME:-}" ]; then
    v=$(oam_java_major "$JAVA_HOME")
    if [ -n "$v" ] && [ "$v" -ge 21 ] && { [ -z "$need_javac" ] || [ -x "$JAVA_HOME/bin/javac" ]; }; then
      OAM_JDK="$JAVA_HOME"; return 0
    fi
  fi
  # macOS: java_home knows every registered JDK; a JDK bundle's home is its Contents/Home.
  if [ -z "${OAM_JVM_DIRS:-}" ] && [ -x /usr/libexec/java_home ]; then
    cand=$(/usr/libexec/java_home -v 21+ 2>/dev/null || true)
    v=$(oam_java_major "$cand")
    if [ -n "$cand" ] && [ -n "$v" ] && [ "$v" -ge 21 ] && { [ -z "$need_javac" ] || [ -x "$cand/bin/javac" ]; }; then
      best="$cand"; best_v="$v"
    fi
  fi
  local dirs="${OAM_JVM_DIRS:-/usr/lib/jvm /Library/Java/JavaVirtualMachines ${HOME:-/nonexistent}/Library/Java/JavaVirtualMachines}" dir
  local IFS=$'\n'
  for cand in $(for dir in ${dirs// /$'\n'}; do ls -d "$dir"/* 2>/dev/null; done); do
    [ -d "$cand/Contents/Home" ] && cand="$cand/Contents/Home"
    [ -d "$cand" ] || continue
    [ -L "$cand" ] && continue
    v=$(oam_java_major "$cand")
    [ -n "$v" ] || continue
    [ -n "$need_javac" ] && [ ! -x "$cand/bin/javac" ] && continue
    if [ "$v" -ge 21 ] && [ "$v" -gt "$best_v" ]; then best="$cand"; best_v="$v"; fi
  done
  if [ -z "$best" ]; then
    {
      echo "oam: no JDK 21 or newer was found."
      echo "  Looked at JAVA_HOME (${JAVA_HOME:-unset}) and the JDKs under ${dirs// /, }."
      echo "  Install one (for example: apt-get install openjdk-21-jdk) or point JAVA_HOME at one."
    } >&2
    exit 1
  fi
  OAM_JDK="$best"
}

oam_check_runtime() { # $1 = a release's runtime, $2 = the file naming the modules oam needs; exits when one is missing
  local runtime="$1" list="$2" have missing="" module
  [ -f "$list" ] || return 0
  have=" $(sed -n 's/^MODULES="\(.*\)"$/\1/p' "$runtime/release" 2>/dev/null) "
  for module in $(cat "$list"); do
    case "$have" in *" $module "*) ;; *) missing="$missing $module" ;; esac
  done
  if [ -n "$missing" ]; then
    {
      echo "oam: the Java runtime in $runtime lacks the module(s)$missing that oam needs."
      echo "  The archive is damaged or was changed: unpack it again, or delete runtime/ to use a JDK 21+ instead."
    } >&2
    exit 1
  fi
}

oam_find_maven() { # sets OAM_MVN: the mvn on the PATH, else the project's ./mvnw (Maven 3.8.7 from Maven Central)
  if command -v mvn >/dev/null 2>&1; then OAM_MVN=$(command -v mvn); return 0; fi
  local wrapper
  wrapper="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/mvnw"
  if [ -x "$wrapper" ]; then OAM_MVN="$wrapper"; return 0; fi
  echo "oam: Maven (mvn) is needed to build oam; install it (for example: apt-get install maven)." >&2
  exit 1
}

oam_maven() { # runs Maven with the JDK found; all of its output goes to stderr
  local major
  major=$(oam_java_major "$OAM_JDK")
  local opts="${MAVEN_OPTS:-}"
  if [ "$major" -ge 24 ]; then opts="$opts --sun-misc-unsafe-memory-access=allow"; fi
  JAVA_HOME="$OAM_JDK" MAVEN_OPTS="$opts" "$OAM_MVN" -Dstyle.color=never "$@"
}
