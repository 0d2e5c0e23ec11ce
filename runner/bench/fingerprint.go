package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/strictyaml"
)

// Fingerprint is what a run's results depend on besides the model: the
// bench file, the mock scripts it names, the tasks' starting trees, the
// agents' versions, the arms' kits by content and wfb's own. A resumed run must have the same one, or
// its cells would not be comparable; Changes says what differs.
type Fingerprint struct {
	BenchSHA256 string `json:"bench_sha256"`
	// MockScripts maps each script (relative to the bench file) to the
	// sha256 of its bytes.
	MockScripts map[string]string `json:"mock_scripts,omitempty"`
	// Workspaces maps each task to its tree: "sha256:..." of a directory's
	// content and modes, or "git COMMIT".
	Workspaces map[string]string `json:"workspaces"`
	// Agents maps each arm to its agent's version.
	Agents map[string]string `json:"agents"`
	// Kits maps each arm that has a kit (MCP servers, skills, files,
	// settings, expected tools) to its digest by content (Arm.KitDigest).
	Kits    map[string]string `json:"kits,omitempty"`
	Harness string            `json:"harness"`
}

// Sum is the fingerprint as one value, "sha256:HEX", for runs.fingerprint.
func (f Fingerprint) Sum() string {
	// Maps marshal in key order, so equal fingerprints have equal sums.
	doc, err := json.Marshal(f)
	if err != nil {
		panic(err) // strings only
	}
	sum := sha256.Sum256(doc)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Changes lists, one line each, how f differs from old: the bench file's
// digest, a mock script, a task's workspace, an arm's agent version, the
// harness version.
func (f Fingerprint) Changes(old Fingerprint) []string {
	var out []string
	if f.BenchSHA256 != old.BenchSHA256 {
		out = append(out, fmt.Sprintf("  bench file: sha256 %s, was %s", shortDigest(f.BenchSHA256), shortDigest(old.BenchSHA256)))
	}
	out = append(out, mapChanges("mock script", f.MockScripts, old.MockScripts, true)...)
	out = append(out, mapChanges("workspace of task", f.Workspaces, old.Workspaces, true)...)
	out = append(out, mapChanges("agent version of arm", f.Agents, old.Agents, false)...)
	out = append(out, mapChanges("kit (MCP servers, skills, files, settings) of arm", f.Kits, old.Kits, true)...)
	if f.Harness != old.Harness {
		out = append(out, fmt.Sprintf("  harness: wfb %s, was wfb %s", f.Harness, old.Harness))
	}
	return out
}

func mapChanges(what string, now, was map[string]string, digests bool) []string {
	keys := map[string]bool{}
	for k := range now {
		keys[k] = true
	}
	for k := range was {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []string
	for _, k := range sorted {
		a, inNow := now[k]
		b, inWas := was[k]
		switch {
		case !inWas:
			out = append(out, fmt.Sprintf("  %s %s: new", what, k))
		case !inNow:
			out = append(out, fmt.Sprintf("  %s %s: no longer named", what, k))
		case a != b && digests:
			out = append(out, fmt.Sprintf("  %s %s: changed (%s, was %s)", what, k, shortDigest(a), shortDigest(b)))
		case a != b:
			out = append(out, fmt.Sprintf("  %s %s: %s, was %s", what, k, a, b))
		}
	}
	return out
}

// MockScriptDigests maps each mock script the bench names, relative to the
// bench file, to the sha256 (hex) of its bytes: a fingerprint's
// MockScripts.
func (b *Bench) MockScriptDigests() (map[string]string, error) {
	out := map[string]string{}
	for _, p := range b.MockScripts() {
		data, err := strictyaml.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("mock script %s: %w", p, err)
		}
		sum := sha256.Sum256(data)
		name, err := filepath.Rel(b.Dir, p)
		if err != nil {
			name = p
		}
		out[filepath.ToSlash(name)] = hex.EncodeToString(sum[:])
	}
	return out, nil
}

// shortDigest abbreviates a digest for a message, keeping a "sha256:" or
// "git " prefix.
func shortDigest(d string) string {
	for _, p := range []string{"sha256:", "git "} {
		if strings.HasPrefix(d, p) {
			return p + abbreviate(strings.TrimPrefix(d, p))
		}
	}
	return abbreviate(d)
}

// abbreviate keeps a digest's first 12 characters: enough to tell two
// apart in a message.
func abbreviate(s string) string { return wfb.Clip(s, 12) }
