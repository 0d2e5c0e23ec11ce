#!/usr/bin/env bash
# Installs the pinned agent CLIs (.ci/agent-versions) from npm into a cache
# directory OUTSIDE the repository, one directory per package@version, and
# skips any already present. It prints one line per CLI, for eval or
# $GITHUB_ENV:
#   WFB_CLAUDE_BIN=/.../claude
#   WFB_CODEX_BIN=/.../codex
#   WFB_GEMINI_BIN=/.../gemini (the .bin symlink to a Node script, as users get it)
# Everything else goes to stderr. The cache is made world-readable so that a
# sandboxed session running as nobody (uid 65534) can execute the binaries;
# as root the default cache is therefore /var/cache/wfb-agents (root's HOME is
# private), otherwise ~/.cache/wfb-agents. WFB_AGENT_CACHE overrides both;
# runner/conformance looks in the same place.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ "$(id -u)" = 0 ]; then default_cache=/var/cache/wfb-agents; else default_cache="$HOME/.cache/wfb-agents"; fi
cache="${WFB_AGENT_CACHE:-$default_cache}"
mkdir -p "$cache"
chmod a+rx "$cache"
# The directories above the cache must be traversable by nobody as well.
d="$cache"
while [ "$d" != "/" ]; do
  d="$(dirname "$d")"
  if [ ! -x "$d" ] || [ "$(stat -c %a "$d" | cut -c3)" = "0" ]; then
    echo "install-agents: warning: $d is not traversable by other users; sandboxed sessions (uid 65534) cannot run the CLIs" >&2
  fi
done

while read -r pkg version bin; do
  case "$pkg" in ''|'#'*) continue ;; esac
  dir="$cache/${pkg//\//+}@$version"
  exe="$dir/node_modules/.bin/$bin"
  if [ ! -x "$exe" ]; then
    echo "install-agents: installing $pkg@$version into $dir" >&2
    tmp="$(mktemp -d "$cache/.install.XXXXXX")"
    # --prefix keeps the install self-contained; no global state, no
    # lifecycle scripts beyond the package's own (they fetch nothing here).
    npm install --prefix "$tmp" --no-audit --no-fund --loglevel=error "$pkg@$version" >&2
    chmod -R a+rX "$tmp"
    rm -rf "$dir"
    mv "$tmp" "$dir"
  fi
  if [ ! -x "$exe" ]; then
    echo "install-agents: $pkg@$version has no $bin binary at $exe" >&2
    exit 1
  fi
  # Codex's npm entry point is a Node script that execs a native binary;
  # point at the native binary so that sessions need no Node on their PATH.
  native="$(find "$dir/node_modules" -path "*/vendor/*/bin/$bin" -type f -perm -o+x 2>/dev/null | head -n1)"
  if [ -n "$native" ]; then exe="$native"; fi
  got="$("$exe" --version 2>/dev/null | head -n1 || true)"
  case "$got" in
    *"$version"*) ;;
    *) echo "install-agents: $exe --version says '$got', want $version" >&2; exit 1 ;;
  esac
  var="WFB_$(echo "$bin" | tr '[:lower:]-' '[:upper:]_')_BIN"
  printf '%s=%q\n' "$var" "$exe"
done < "$here/agent-versions"
