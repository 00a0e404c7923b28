#!/usr/bin/env bash
# Checks that every Markdown document the repository names exists in the repository: a newcomer who reads
# "docs/GAMES.md, \"Turn building\"" in a comment must find that file, and that section in it. Run by bin/test (also
# in its fast mode: it needs nothing but git, bash and awk); run it alone as bin/lib/check-doc-links.sh.
#
# What it reads: every file git tracks, plus new files git does not ignore (so build output such as target/ is never
# read), binary files skipped. In each, every name ending in ".md" (not part of a shell variable such as
# "$DIR/README.md", nor of a URL) must resolve to one of those files: as a path from the repository's root, from the
# citing file's folder or any folder above it ("../README.md" in a module's test), or, for a file under src/*/java, as
# a class-path resource beside it (src/*/resources). A name followed by a quoted section title
# (docs/<file>.md, "Title" or docs/<file>.md, 'Title') must also be the start of one of that document's headings, and
# a name followed by a section number (§) is refused: the repository's documents are cited by heading.
#
# Exits 1 and lists every name that does not resolve (file:line: name); prints one line on success.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
files=$(mktemp)
trap 'rm -f "$files"' EXIT
git ls-files --cached --others --exclude-standard | sort -u >"$files"

git grep --untracked -I -n -E '\.md([^A-Za-z0-9_]|$)' -- . |
  awk -v files="$files" '
    function normalize(path,    parts, n, i, out, k, stack) {
      n = split(path, parts, "/")
      k = 0
      for (i = 1; i <= n; i++) {
        if (parts[i] == "" || parts[i] == ".") continue
        if (parts[i] == "..") { if (k == 0) return ""; k--; continue }
        stack[++k] = parts[i]
      }
      out = ""
      for (i = 1; i <= k; i++) out = out (i > 1 ? "/" : "") stack[i]
      return out
    }
    function resolve(name, from,    dir, candidate, resources) {
      if (normalize(name) in known) return normalize(name)
      dir = from
      while (dir != "") {
        sub(/\/?[^\/]*$/, "", dir)
        candidate = normalize((dir == "" ? "" : dir "/") name)
        if (candidate != "" && candidate in known) return candidate
      }
      if (from ~ /\/src\/[^\/]+\/java[0-9]*\//) {
        resources = from
        sub(/\/src\/[^\/]+\/java[0-9]*\//, "/src/main/resources/", resources)
        sub(/\/[^\/]*$/, "", resources)
        candidate = normalize(resources "/" name)
        if (candidate in known) return candidate
      }
      return ""
    }
    function headings(doc,    line, h) {
      if (doc in loaded) return
      loaded[doc] = 1
      while ((getline line < doc) > 0) {
        if (line ~ /^#+ /) { h = line; sub(/^#+ +/, "", h); titles[doc] = titles[doc] "\n" h }
      }
      close(doc)
    }
    function has_heading(doc, title,    n, i, list) {
      headings(doc)
      n = split(titles[doc], list, "\n")
      for (i = 1; i <= n; i++) if (list[i] != "" && index(list[i], title) == 1) return 1
      return 0
    }
    BEGIN {
      while ((getline f < files) > 0) known[f] = 1
      close(files)
    }
    {
      # git grep -n: FILE:LINE:TEXT
      split($0, head, ":")
      file = head[1]; lineno = head[2]
      text = substr($0, length(file) + length(lineno) + 3)
      rest = text; offset = 0
      while (match(rest, /[A-Za-z0-9_.\/-]*[A-Za-z0-9_-]\.md([^A-Za-z0-9_]|$)/)) {
        name = substr(rest, RSTART, RLENGTH)
        sub(/[^d]$/, "", name)
        before = RSTART > 1 ? substr(rest, RSTART - 1, 1) : ""
        after = substr(rest, RSTART + length(name))
        rest = substr(rest, RSTART + length(name))
        if (before == "$" || before == "}" || before == ")" || name ~ /^\/\//) continue
        target = resolve(name, file)
        if (target == "") {
          printf "%s:%s: %s does not name a file of the repository\n", file, lineno, name
          bad++
          continue
        }
        if (match(after, /^,?[ ]*§/)) {
          # Documents of this repository have no numbered sections: a number cites the numbering of some other document.
          printf "%s:%s: %s is cited by a section number; cite a heading instead (%s, \"Heading\")\n", file, lineno, name, target
          bad++
          continue
        }
        if (match(after, /^,[ ]*("[^"]+"|\047[^\047]+\047)/)) {
          title = substr(after, RSTART, RLENGTH)
          sub(/^,[ ]*./, "", title); sub(/.$/, "", title)
          if (!has_heading(target, title)) {
            printf "%s:%s: %s has no heading \"%s\"\n", file, lineno, target, title
            bad++
          }
        }
        checked++
      }
    }
    END {
      if (bad) {
        printf "oam: %d document reference(s) above do not resolve; documents cited in the sources must be files of the repository (docs/)\n", bad > "/dev/stderr"
        exit 1
      }
      printf "oam: document references: %d checked, all resolve\n", checked > "/dev/stderr"
    }
  '
