#!/usr/bin/env bash
# Installs the pinned agent CLIs and MCP server (.ci/agent-versions) from npm
# into a cache directory OUTSIDE the repository, one directory per
# package@version, and skips any already present. It prints one line per
# binary, for eval or $GITHUB_ENV:
#   WFB_CLAUDE_BIN=/.../claude
#   WFB_CODEX_BIN=/.../codex
#   WFB_GEMINI_BIN=/.../gemini (the .bin symlink to a Node script, as users get it)
#   WFB_OPENCODE_BIN=/.../opencode (the .bin symlink to opencode's native
#     binary, which the package's postinstall links for this CPU)
#   WFB_QWEN_BIN=/.../qwen (the .bin symlink to a Node script; its vendored
#     ripgrep lacks the exec bit, and wfb's settings for it turn ripgrep off)
#   WFB_MCP_EVERYTHING_BIN=/.../mcp-server-everything (likewise; it serves MCP
#     over stdio when run with no argument or `stdio`)
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

while read -r pkg version bin options; do
  case "$pkg" in ''|'#'*) continue ;; esac
  var="WFB_$(echo "$bin" | tr '[:lower:]-' '[:upper:]_')_BIN"
  check=version
  for opt in $options; do
    case "$opt" in
      var=?*) var="${opt#var=}" ;;
      check=package) check=package ;;
      *) echo "install-agents: $pkg: unknown option '$opt' in agent-versions" >&2; exit 1 ;;
    esac
  done
  dir="$cache/${pkg//\//+}@$version"
  exe="$dir/node_modules/.bin/$bin"
  if [ ! -x "$exe" ]; then
    echo "install-agents: installing $pkg@$version into $dir" >&2
    tmp="$(mktemp -d "$cache/.install.XXXXXX")"
    # --prefix keeps the install self-contained; no global state, no
    # lifecycle scripts beyond the package's own (they fetch nothing here).
    npm install --prefix "$tmp" --no-audit --no-fund --loglevel=error "$pkg@$version" </dev/null >&2
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
  if [ "$check" = package ]; then
    # No --version to ask: the installed package says what it is.
    got="$(node -p 'require(process.argv[1]).version' "$dir/node_modules/$pkg/package.json" 2>/dev/null || true)"
    if [ "$got" != "$version" ]; then
      echo "install-agents: $dir/node_modules/$pkg/package.json says version '$got', want $version" >&2; exit 1
    fi
  else
    # </dev/null: a CLI that reads its stdin (Gemini CLI does) would eat
    # the rest of agent-versions, and the lines after it would be skipped.
    got="$("$exe" --version </dev/null 2>/dev/null | head -n1 || true)"
    case "$got" in
      *"$version"*) ;;
      *) echo "install-agents: $exe --version says '$got', want $version" >&2; exit 1 ;;
    esac
  fi
  printf '%s=%q\n' "$var" "$exe"
done < "$here/agent-versions"
