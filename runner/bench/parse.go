package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/goccy/go-yaml/ast"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/strictyaml"
	"github.com/wfbench/wfb/runner/review"
)

// Problem is one thing wrong with a bench file, located by line and column
// (0 when unknown) and by field path, e.g. tasks[1].workspace; a problem of
// a mock script the bench names is Nested under the one naming it.
type Problem = strictyaml.Problem

// Error lists every problem of a bench file at once, so that one edit fixes
// them all.
type Error = strictyaml.Error

// node is a YAML AST node.
type node = ast.Node

// ScriptChecker validates a mock script's bytes; a non-nil error lists its
// problems, one per line, each already naming the script's file and line.
// cmd/wfb passes provider.ParseScript: bench does not import the mock.
type ScriptChecker func(path string, data []byte) error

// Load reads and validates the bench file at path. Every problem, in
// the bench file and in the mock scripts it names (through check, which may
// be nil), is reported in one *Error; a *Error means nothing may
// start.
func Load(path string, check ScriptChecker) (*Bench, error) {
	data, err := strictyaml.ReadFile(path)
	if err != nil {
		return nil, &Error{Problems: []Problem{{File: path, Message: "cannot read the bench file: " + errText(err)}}}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("bench file %s: %w", path, err)
	}
	return Parse(path, filepath.Dir(abs), data, check)
}

// Parse parses a bench file's bytes. name is used in messages; dir is
// the absolute directory relative paths are resolved against.
func Parse(name, dir string, data []byte, check ScriptChecker) (*Bench, error) {
	sum := sha256.Sum256(data)
	b := &Bench{
		Path: name, Dir: dir, Digest: hex.EncodeToString(sum[:]),
		Runs: 1, Timeout: DefaultTimeout, Sandbox: wfb.SandboxAuto, Workers: 1,
		RetryBudget: -1, Breaker: DefaultBreaker, Retries: map[string]int{},
	}
	w := &strictyaml.Walker{File: name, SkipTags: true}
	root, ok := w.Parse(data, "bench file")
	if ok && root == nil {
		w.Addf(nil, "", "the bench file is empty (it needs provider, tasks and arms)")
		ok = false
	}
	if ok {
		bp := &benchParser{Walker: w, b: b, check: check, scripts: map[string]bool{}}
		bp.bench(root)
	}
	if err := w.Err(); err != nil {
		return nil, err
	}
	return b, nil
}

type benchParser struct {
	*strictyaml.Walker
	b       *Bench
	check   ScriptChecker
	scripts map[string]bool // checked already
}

var (
	idPattern  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`) })
	envPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
)

// ValidID says whether s has the shape of a task, arm or label id (letters,
// digits, '.', '_' and '-', starting with a letter or digit); a run id
// given on the command line must have it too.
func ValidID(s string) bool { return idPattern().MatchString(s) }

// reservedEnv are set by wfb for every session; an arm cannot override them.
var reservedEnv = []string{"HOME", "TMPDIR", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", review.OutputEnv}

const benchFields = "description, runs, timeout, sandbox, require_pid_namespace, require_witness, workers, pids_max, memory_max_mib, max_requests, provider, retries, retry_budget, breaker, budget, tasks, arms"

func (p *benchParser) bench(root node) {
	pairs, ok := p.Mapping(root, "")
	if !ok {
		return
	}
	var tasksAt, armsAt node
	for _, kv := range pairs {
		f := kv.Key
		switch kv.Key {
		case "description":
			p.b.Description, _ = p.Str(kv.Value, f)
		case "runs":
			if n, ok := p.IntRange(kv.Value, f, 1, MaxRuns); ok {
				p.b.Runs = n
			}
		case "timeout":
			if d, ok := p.Duration(kv.Value, f); ok {
				p.b.Timeout = d
			}
		case "sandbox":
			if s, ok := p.Str(kv.Value, f); ok {
				p.b.Sandbox = s
				p.sandboxName(kv.Value, f, s)
			}
		case "require_pid_namespace":
			p.b.RequirePIDNamespace, _ = p.Bool(kv.Value, f)
		case "require_witness":
			p.b.RequireWitness, _ = p.Bool(kv.Value, f)
		case "workers":
			if n, ok := p.IntRange(kv.Value, f, 1, MaxWorkers); ok {
				p.b.Workers = n
			}
		case "pids_max":
			if n, ok := p.IntRange(kv.Value, f, MinPidsMax, MaxPidsMax); ok {
				p.b.PidsMax = n
			}
		case "memory_max_mib":
			if n, ok := p.IntRange(kv.Value, f, MinMemoryMaxMiB, MaxMemoryMaxMiB); ok {
				p.b.MemoryMaxMiB = n
			}
		case "max_requests":
			if n, ok := p.IntRange(kv.Value, f, MinMaxRequests, MaxMaxRequests); ok {
				p.b.MaxRequests = n
			}
		case "provider":
			if pr, ok := p.provider(kv.Value, f); ok {
				p.b.Provider = pr
			}
		case "retries", "retry_budget", "breaker", "budget":
			p.stopField(kv)
		case "tasks":
			tasksAt = kv.KeyAt
			p.tasks(kv.Value, f)
		case "arms":
			armsAt = kv.KeyAt
			p.arms(kv.Value, f)
		default:
			p.Addf(kv.KeyAt, f, "unknown field (a bench has: %s)", benchFields)
		}
	}
	at := func(n node) node {
		if n != nil {
			return n
		}
		return root
	}
	if !p.has(pairs, "provider") {
		p.providerless(root)
	}
	if len(p.b.Tasks) == 0 && !p.failedUnder("tasks") {
		p.Addf(at(tasksAt), "tasks", "at least one task is required")
	}
	if len(p.b.Arms) == 0 && !p.failedUnder("arms") {
		p.Addf(at(armsAt), "arms", "at least one arm is required")
	}
}

// providerless checks a bench without a top-level provider: a cell's
// provider is its arm's, else its task's, so the bench needs none when
// every arm or every task names one. Otherwise the refusal names the
// tasks and the arms without one, whose cells would have no provider. A
// task or arm whose provider failed to parse counts as naming one: its
// own problem is reported.
func (p *benchParser) providerless(root node) {
	const how = "{mock: FILE} for a dry run, or {base_url: URL, api_key_env: NAME}"
	var tasks, arms []string
	for i, t := range p.b.Tasks {
		if f := fmt.Sprintf("tasks[%d]", i); t.Provider == nil && !p.failedUnder(f+".provider") {
			tasks = append(tasks, orIndex(t.ID, f))
		}
	}
	for i, a := range p.b.Arms {
		if f := fmt.Sprintf("arms[%d]", i); a.Provider == nil && !p.failedUnder(f+".provider") {
			arms = append(arms, orIndex(a.ID, f))
		}
	}
	switch {
	case len(p.b.Tasks) == 0 || len(p.b.Arms) == 0:
		p.Addf(root, "provider", "is required: %s", how)
	case len(tasks) > 0 && len(arms) > 0:
		p.Addf(root, "provider", "is required unless every task or every arm names one (a cell's provider is its arm's, else its task's, else this one): %s and %s name none, so their cells would have no provider; give one here: %s",
			namesOf("task", tasks), namesOf("arm", arms), how)
	}
}

// orIndex is an item's id, or its place in the list where it has none.
func orIndex(id, place string) string {
	if id == "" {
		return place
	}
	return id
}

// namesOf is "task a" or "tasks a, b, c".
func namesOf(kind string, ids []string) string {
	if len(ids) == 1 {
		return kind + " " + ids[0]
	}
	return kind + "s " + strings.Join(ids, ", ")
}

// stopField reads one of the fields that say when a run stops retrying or
// stops starting cells.
func (p *benchParser) stopField(kv strictyaml.Pair) {
	f := kv.Key
	switch kv.Key {
	case "retries":
		p.retries(kv.Value, f)
	case "retry_budget":
		if n, ok := p.IntRange(kv.Value, f, 0, 1_000_000); ok {
			p.b.RetryBudget = n
		}
	case "breaker":
		if n, ok := p.IntRange(kv.Value, f, 0, 1_000_000); ok {
			p.b.Breaker = n
		}
	case "budget":
		if v, ok := p.dollars(kv.Value, f); ok {
			p.b.Budget = v
		}
	}
}

// dollars reads a positive, finite amount of US dollars: an integer or a
// decimal number (25, 2.5), never a string ("$25").
func (p *benchParser) dollars(n node, field string) (float64, bool) {
	d := p.Deref(n, field)
	var v float64
	switch x := d.(type) {
	case *ast.FloatNode:
		v = x.Value
	case *ast.IntegerNode:
		i, ok := p.Int(d, field)
		if !ok {
			return 0, false
		}
		v = float64(i)
	default:
		if d != nil {
			p.Addf(d, field, "must be a positive number of US dollars such as 25 or 2.5, got %s", strictyaml.Describe(d))
		}
		return 0, false
	}
	if !(v > 0) || math.IsInf(v, 0) {
		p.Addf(d, field, "must be a positive number of US dollars such as 25 or 2.5, got %s", d.GetToken().Value)
		return 0, false
	}
	return v, true
}

func (p *benchParser) has(pairs []strictyaml.Pair, key string) bool {
	return p.keyOf(pairs, key) != nil
}

func (p *benchParser) keyOf(pairs []strictyaml.Pair, key string) node {
	for _, kv := range pairs {
		if kv.Key == key {
			return kv.KeyAt
		}
	}
	return nil
}

func (p *benchParser) failedUnder(field string) bool {
	for _, pr := range p.Problems {
		if pr.Field == field || strings.HasPrefix(pr.Field, field+"[") || strings.HasPrefix(pr.Field, field+".") {
			return true
		}
	}
	return false
}

func (p *benchParser) sandboxName(at node, field, s string) {
	// A backend this machine cannot provide parses: each cell records the
	// sandbox's own refusal as a sandbox-refused row.
	if s != wfb.SandboxAuto && !slices.Contains(wfb.SandboxStrength, s) {
		p.Addf(at, field, "unknown sandbox %q (want %s, or %s)", s, strings.Join(wfb.SandboxStrength, ", "), wfb.SandboxAuto)
	}
}

func (p *benchParser) retries(n node, field string) {
	pairs, ok := p.Mapping(n, field)
	if !ok {
		return
	}
	for _, kv := range pairs {
		f := field + "." + kv.Key
		switch {
		case kv.Key == wfb.KindCancelled:
			p.Addf(kv.KeyAt, f, "a cancelled attempt is never retried (it was stopped on purpose; --resume runs it again)")
			continue
		case !slices.Contains(wfb.ErrorKinds, kv.Key):
			p.Addf(kv.KeyAt, f, "unknown error kind (one of: %s)", strings.Join(wfb.ErrorKinds, ", "))
			continue
		}
		if c, ok := p.IntRange(kv.Value, f, 0, 100); ok {
			p.b.Retries[kv.Key] = c
		}
	}
}

const providerFields = "mock, base_url, api_key_env"

func (p *benchParser) provider(n node, field string) (Provider, bool) {
	pairs, ok := p.Mapping(n, field)
	if !ok {
		return Provider{}, false
	}
	before := len(p.Problems)
	var pr Provider
	var mockAt, urlAt, keyAt node
	for _, kv := range pairs {
		f := field + "." + kv.Key
		switch kv.Key {
		case "mock":
			mockAt = kv.Value
			if s, ok := p.NonEmpty(kv.Value, f); ok {
				pr.Mock = p.resolve(s)
				p.script(kv.Value, f, s, pr.Mock)
			}
		case "base_url":
			urlAt = kv.Value
			if s, ok := p.NonEmpty(kv.Value, f); ok {
				p.httpURL(kv.Value, f, s, "; name the key's variable in api_key_env")
				pr.BaseURL = strings.TrimSuffix(s, "/")
			}
		case "api_key_env":
			keyAt = kv.Value
			if s, ok := p.NonEmpty(kv.Value, f); ok {
				if !envPattern().MatchString(s) {
					// Not echoed: what is there instead of a name is likely the key.
					p.Addf(kv.Value, f, "must be an environment variable NAME such as ANTHROPIC_API_KEY (the key itself never goes in the file)")
				}
				pr.APIKeyEnv = s
			}
		default:
			p.Addf(kv.KeyAt, f, "unknown field (a provider has: %s)", providerFields)
		}
	}
	switch {
	case mockAt != nil && urlAt != nil:
		p.Addf(urlAt, field+".base_url", "mock and base_url are exclusive: a cell talks to one provider")
	case mockAt == nil && urlAt == nil:
		p.Addf(n, field, "needs mock: FILE (a dry run) or base_url: URL")
	case mockAt != nil && keyAt != nil:
		p.Addf(keyAt, field+".api_key_env", "only with base_url: a mock provider needs no key")
	}
	if pr.BaseURL != "" && pr.APIKeyEnv == "" {
		pr.APIKeyEnv = DefaultKeyEnv
	}
	return pr, len(p.Problems) == before
}

// httpURL refuses s unless it is an http(s) URL without credentials in it
// (fix says what to do instead).
func (p *benchParser) httpURL(at node, field, s, fix string) {
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		// Redacted: a malformed URL may still carry a key.
		p.Addf(at, field, "must be an http(s) URL, got %q", wfb.Redact(s))
	case u.User != nil:
		p.Addf(at, field, "must not carry credentials%s", fix)
	}
}

// script checks a mock script once, its problems joining the bench's.
func (p *benchParser) script(at node, field, given, abs string) {
	data, err := strictyaml.ReadFile(abs)
	if err != nil {
		p.Addf(at, field, "cannot read mock script %s: %s", given, errText(err))
		return
	}
	if p.check == nil || p.scripts[abs] {
		return
	}
	p.scripts[abs] = true
	// The script's problems name it as the user would open it: relative to
	// where the bench file was named from, not to wfb's idea of the bench
	// directory.
	name := given
	if !filepath.IsAbs(given) {
		name = filepath.Join(filepath.Dir(p.File), given)
	}
	if err := p.check(name, data); err != nil {
		p.Addf(at, field, "mock script %s is invalid:", given)
		head := p.Problems[len(p.Problems)-1]
		for _, line := range strings.Split(err.Error(), "\n") {
			p.Problems = append(p.Problems, Problem{File: p.File, Line: head.Line, Column: head.Column, Field: field, Nested: line})
		}
	}
}

func (p *benchParser) resolve(s string) string {
	if filepath.IsAbs(s) {
		return filepath.Clean(s)
	}
	return filepath.Join(p.b.Dir, s)
}

const taskFields = "id, class, workspace, prompt, setup, verify, review, labels, verdict, expensive, timeout, provider"

func (p *benchParser) tasks(n node, field string) {
	seen := map[string]bool{}
	p.mappings(n, field, func(f string, item node, pairs []strictyaml.Pair) {
		var t Task
		var labelsAt node
		for _, kv := range pairs {
			kf := f + "." + kv.Key
			switch kv.Key {
			case "id":
				t.ID = p.id(kv.Value, kf, seen, "task")
			case "class":
				t.Class, _ = p.Str(kv.Value, kf)
			case "workspace":
				t.Workspace, _ = p.workspace(kv.Value, kf)
			case "prompt":
				t.Prompt, _ = p.NonEmpty(kv.Value, kf)
			case "setup":
				t.Setup, _ = p.NonEmpty(kv.Value, kf)
			case "verify":
				t.Verify, _ = p.NonEmpty(kv.Value, kf)
			case "labels":
				labelsAt = kv.KeyAt
				t.Labels = p.labels(kv.Value, kf)
			case "verdict":
				if v, ok := p.Str(kv.Value, kf); ok {
					if !slices.Contains(verdicts, v) {
						p.Addf(kv.Value, kf, "must be one of %s, got %q", strings.Join(verdicts, ", "), v)
					}
					t.Verdict = v
				}
			case "expensive":
				t.Expensive, _ = p.Bool(kv.Value, kf)
			case "review":
				t.Review, _ = p.Bool(kv.Value, kf)
			case "timeout":
				t.Timeout, _ = p.Duration(kv.Value, kf)
			case "provider":
				if pr, ok := p.provider(kv.Value, kf); ok {
					t.Provider = &pr
				}
			default:
				p.Addf(kv.KeyAt, kf, "unknown field (a task has: %s)", taskFields)
			}
		}
		p.required(item, f, pairs, "id", "workspace", "prompt")
		if labelsAt != nil && !t.Review {
			p.Addf(labelsAt, f+".labels", "labels are the ground truth of a review; set review: true on this task")
		}
		if verdictAt := p.keyOf(pairs, "verdict"); verdictAt != nil && !t.Review {
			p.Addf(verdictAt, f+".verdict", "an expected verdict scores a review; set review: true on this task")
		}
		p.b.Tasks = append(p.b.Tasks, t)
	})
}

// mappings walks a list whose items are mappings (tasks, arms, labels),
// passing fn each item's field path and pairs; an item that is not a
// mapping is reported and skipped.
func (p *benchParser) mappings(n node, field string, fn func(f string, item node, pairs []strictyaml.Pair)) {
	items, ok := p.Sequence(n, field)
	if !ok {
		return
	}
	for i, item := range items {
		f := fmt.Sprintf("%s[%d]", field, i)
		if pairs, ok := p.Mapping(item, f); ok {
			fn(f, item, pairs)
		}
	}
}

// required reports each of keys that item, at field, lacks.
func (p *benchParser) required(item node, field string, pairs []strictyaml.Pair, keys ...string) {
	for _, k := range keys {
		if !p.has(pairs, k) {
			p.Addf(item, field+"."+k, "is required")
		}
	}
}

// id reads the id of a task, arm or label: not empty, of idPattern's
// shape, and not one of its siblings' (seen).
func (p *benchParser) id(n node, field string, seen map[string]bool, what string) string {
	s, ok := p.NonEmpty(n, field)
	if !ok {
		return ""
	}
	switch {
	case !idPattern().MatchString(s):
		p.Addf(n, field, "%s id %q: use letters, digits, '.', '_' and '-', starting with a letter or digit", what, s)
	case seen[s]:
		p.Addf(n, field, "duplicate %s id %q", what, s)
	}
	seen[s] = true
	return s
}

func (p *benchParser) workspace(n node, field string) (Workspace, bool) {
	if s, isStr := p.ScalarString(n); isStr {
		if s == "" {
			p.Addf(n, field, "must not be empty")
			return Workspace{}, false
		}
		abs := p.resolve(s)
		fi, err := os.Stat(abs)
		switch {
		case err != nil:
			p.Addf(n, field, "directory %s: %s (relative paths start at the bench file's directory)", s, errText(err))
			return Workspace{}, false
		case !fi.IsDir():
			p.Addf(n, field, "%s is not a directory", s)
			return Workspace{}, false
		}
		return Workspace{Dir: abs}, true
	}
	pairs, ok := p.Mapping(n, field)
	if !ok {
		return Workspace{}, false
	}
	var w Workspace
	for _, kv := range pairs {
		f := field + "." + kv.Key
		switch kv.Key {
		case "git":
			if s, ok := p.NonEmpty(kv.Value, f); ok {
				w.Git = s
				if !looksLikeURL(s) {
					w.Git = p.resolve(s)
					if _, err := os.Stat(w.Git); err != nil {
						p.Addf(kv.Value, f, "repository %s: %s", s, errText(err))
					}
				}
			}
		case "ref":
			w.Ref, _ = p.Literal(kv.Value, f)
		default:
			p.Addf(kv.KeyAt, f, "unknown field (a workspace is a directory, or {git, ref})")
		}
	}
	if !p.has(pairs, "git") {
		p.Addf(n, field+".git", "is required (a repository URL or path)")
	}
	if !p.has(pairs, "ref") {
		p.Addf(n, field+".ref", "is required: pin a commit (or a tag) so every cell starts from the same tree")
	}
	return w, true
}

func looksLikeURL(s string) bool {
	return strings.Contains(s, "://") || (strings.Contains(s, "@") && strings.Contains(s, ":"))
}

var (
	severities = []string{"critical", "high", "medium", "low"}
	verdicts   = []string{review.VerdictApprove, review.VerdictComment, review.VerdictRequestChanges}
)

const labelFields = "id, severity, path, line_start, line_end, category"

func (p *benchParser) labels(n node, field string) []review.Label {
	seen := map[string]bool{}
	var out []review.Label
	p.mappings(n, field, func(f string, item node, pairs []strictyaml.Pair) {
		var l review.Label
		var endAt node
		for _, kv := range pairs {
			kf := f + "." + kv.Key
			switch kv.Key {
			case "id":
				l.ID = p.id(kv.Value, kf, seen, "label")
			case "severity":
				if s, ok := p.Str(kv.Value, kf); ok {
					if !slices.Contains(severities, s) {
						p.Addf(kv.Value, kf, "must be one of %s, got %q", strings.Join(severities, ", "), s)
					}
					l.Severity = s
				}
			case "path":
				if s, ok := p.NonEmpty(kv.Value, kf); ok {
					clean := filepath.ToSlash(filepath.Clean(strings.TrimPrefix(s, "./")))
					if filepath.IsAbs(s) || clean == ".." || strings.HasPrefix(clean, "../") {
						p.Addf(kv.Value, kf, "must be relative to the workspace, got %q", s)
					}
					l.Path = clean
				}
			case "line_start":
				l.LineStart, _ = p.IntRange(kv.Value, kf, 1, 1<<30)
			case "line_end":
				endAt = kv.Value
				l.LineEnd, _ = p.IntRange(kv.Value, kf, 1, 1<<30)
			case "category":
				l.Category, _ = p.NonEmpty(kv.Value, kf)
			default:
				p.Addf(kv.KeyAt, kf, "unknown field (a label has: %s)", labelFields)
			}
		}
		p.required(item, f, pairs, "id", "severity", "path", "line_start", "category")
		if l.LineEnd == 0 {
			l.LineEnd = l.LineStart
		} else if endAt != nil && l.LineStart > 0 && l.LineEnd < l.LineStart {
			p.Addf(endAt, f+".line_end", "%d is before line_start %d", l.LineEnd, l.LineStart)
		}
		out = append(out, l)
	})
	return out
}

const armFields = "id, agent, agent_bin, model, flags, prompt_prefix, prompt_suffix, allowed_tools, max_turns, require_witness, env, provider, mcp_servers, skills, files, settings, expect_tools"

func (p *benchParser) arms(n node, field string) {
	seen := map[string]bool{}
	p.mappings(n, field, func(f string, item node, pairs []strictyaml.Pair) {
		var a Arm
		for _, kv := range pairs {
			kf := f + "." + kv.Key
			switch kv.Key {
			case "id":
				a.ID = p.id(kv.Value, kf, seen, "arm")
			case "agent":
				if s, ok := p.Str(kv.Value, kf); ok {
					if !slices.Contains(Agents, s) {
						p.Addf(kv.Value, kf, "unknown agent %q (want %s or %s)", s, strings.Join(Agents[:len(Agents)-1], ", "), Agents[len(Agents)-1])
					}
					a.Agent = s
				}
			case "agent_bin":
				if s, ok := p.NonEmpty(kv.Value, kf); ok {
					a.AgentBin = s
					if strings.Contains(s, "/") {
						a.AgentBin = p.resolve(s)
					}
				}
			case "model":
				a.Model, _ = p.Str(kv.Value, kf)
			case "flags":
				a.Flags = p.Strings(kv.Value, kf)
			case "prompt_prefix":
				a.PromptPrefix, _ = p.Str(kv.Value, kf)
			case "prompt_suffix":
				a.PromptSuffix, _ = p.Str(kv.Value, kf)
			case "allowed_tools":
				a.AllowedTools = p.Strings(kv.Value, kf)
			case "max_turns":
				a.MaxTurns, _ = p.IntRange(kv.Value, kf, 1, 10000)
			case "require_witness":
				a.RequireWitness, _ = p.Bool(kv.Value, kf)
			case "env":
				a.Env = p.env(kv.Value, kf)
			case "provider":
				if pr, ok := p.provider(kv.Value, kf); ok {
					a.Provider = &pr
				}
			case "mcp_servers":
				a.MCPServers = p.mcpServers(kv.Value, kf)
			case "skills":
				a.Skills = p.skills(kv.Value, kf)
			case "files":
				a.Files = p.files(kv.Value, kf)
			case "settings":
				a.Settings = p.settings(kv.Value, kf)
			case "expect_tools":
				a.ExpectTools = p.expectTools(kv.Value, kf)
			default:
				p.Addf(kv.KeyAt, kf, "unknown field (an arm has: %s)", armFields)
			}
		}
		p.required(item, f, pairs, "id", "agent")
		if a.Agent == AgentCodex {
			// Codex exec has neither: refused here, not as a failed row per cell.
			if at := p.keyOf(pairs, "max_turns"); at != nil {
				p.Addf(at, f+".max_turns", "codex exec has no turn limit; remove it from this arm")
			}
			if at := p.keyOf(pairs, "allowed_tools"); at != nil {
				p.Addf(at, f+".allowed_tools", "codex exec has no tool allow-list; remove it from this arm")
			}
		}
		if a.Agent == AgentGemini || a.Agent == AgentQwen {
			if at := p.keyOf(pairs, "allowed_tools"); at != nil {
				p.Addf(at, f+".allowed_tools", "%s's approval mode decides which tools run; remove it from this arm", a.Agent)
			}
		}
		if a.Agent == AgentOpencode {
			if at := p.keyOf(pairs, "max_turns"); at != nil {
				p.Addf(at, f+".max_turns", "opencode run has no turn limit wfb can set; remove it from this arm")
			}
			if at := p.keyOf(pairs, "allowed_tools"); at != nil {
				p.Addf(at, f+".allowed_tools", "opencode's permission rules decide which tools run; give them as this arm's settings (permission), not allowed_tools")
			}
			if a.Model == "" {
				p.Addf(item, f+".model", "opencode needs a model: wfb defines its provider with the one model the arm names")
			}
		}
		p.checkKit(f, &a, pairs)
		p.b.Arms = append(p.b.Arms, a)
	})
}

// env reads `[NAME, ...]` (each passed from wfb's environment under its own
// name) or `{NAME: {from_env: OTHER} | {value: TEXT}}`.
func (p *benchParser) env(n node, field string) []EnvVar {
	var out []EnvVar
	seen := map[string]bool{}
	name := func(at node, f, s string) bool {
		switch {
		case !envPattern().MatchString(s):
			p.Addf(at, f, "%q is not an environment variable name", s)
		case slices.Contains(reservedEnv, s):
			p.Addf(at, f, "%s is set by wfb for every session and cannot be overridden", s)
		case seen[s]:
			p.Addf(at, f, "duplicate variable %s", s)
		default:
			seen[s] = true
			return true
		}
		return false
	}
	if items, isSeq := p.AsSequence(n); isSeq {
		for i, item := range items {
			f := fmt.Sprintf("%s[%d]", field, i)
			if s, ok := p.Str(item, f); ok && name(item, f, s) {
				out = append(out, EnvVar{Name: s, FromEnv: s})
			}
		}
		return out
	}
	pairs, ok := p.Mapping(n, field)
	if !ok {
		return nil
	}
	for _, kv := range pairs {
		f := field + "." + kv.Key
		if !name(kv.KeyAt, f, kv.Key) {
			continue
		}
		if s, isStr := p.ScalarString(kv.Value); isStr {
			p.Addf(kv.Value, f, "write {from_env: NAME} to pass a variable of wfb's environment, or {value: %q} for a setting that is not a secret", s)
			continue
		}
		vp, ok := p.Mapping(kv.Value, f)
		if !ok {
			continue
		}
		v := EnvVar{Name: kv.Key}
		for _, x := range vp {
			xf := f + "." + x.Key
			switch x.Key {
			case "from_env":
				if s, ok := p.NonEmpty(x.Value, xf); ok {
					if !envPattern().MatchString(s) {
						p.Addf(x.Value, xf, "%q is not an environment variable name", s)
					}
					v.FromEnv = s
				}
			case "value":
				if s, ok := p.Str(x.Value, xf); ok {
					if wfb.IsSecretName(kv.Key) {
						p.Addf(x.Value, xf, "%s looks like a secret; secrets come from the environment (from_env), never the bench file", kv.Key)
					}
					v.Value, v.Literal = s, true
				}
			default:
				p.Addf(x.KeyAt, xf, "unknown field (want from_env or value)")
			}
		}
		if (v.FromEnv == "") == !v.Literal {
			p.Addf(kv.Value, f, "needs exactly one of from_env or value")
			continue
		}
		out = append(out, v)
	}
	return out
}

// errText is an error's message without Go's "open /abs/path:" prefix, so
// messages say what the user wrote.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
