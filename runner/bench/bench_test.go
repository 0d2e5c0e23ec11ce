package bench

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/testkit/golden"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner/review"
)

// checkGolden compares got with testdata/NAME, or rewrites it with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	golden.Check(t, path, []byte(got))
}

func checkScript(path string, data []byte) error {
	_, err := provider.ParseScript(path, data)
	return err
}

// The smallest bench of the issue must parse, with every default filled in
// and paths resolved against the bench file, not the working directory.
func TestTheSmallestBenchParsesWithDefaults(t *testing.T) {
	b, err := Load("testdata/bench/smallest.yaml", checkScript)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	dir, _ := filepath.Abs("testdata/bench")
	want := &Bench{
		Path: "testdata/bench/smallest.yaml", Dir: dir, Digest: b.Digest,
		Runs: 3, Timeout: DefaultTimeout, Sandbox: wfb.SandboxAuto, Workers: 1,
		Provider: Provider{Mock: filepath.Join(dir, "replies.yaml")},
		Retries:  map[string]int{}, RetryBudget: -1, Breaker: DefaultBreaker,
		Tasks: []Task{{ID: "t1", Workspace: Workspace{Dir: filepath.Join(dir, "fixtures/t1")}, Prompt: "review the change"}},
		Arms: []Arm{
			{ID: "baseline", Agent: AgentStandIn},
			{ID: "candidate", Agent: AgentStandIn, PromptPrefix: "Be thorough. "},
		},
	}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("bench (-want +got):\n%s", diff)
	}
	if len(b.Digest) != 64 {
		t.Errorf("digest %q is not a sha256", b.Digest)
	}
}

// A bad bench file gets every problem at once, each with file:line and
// field, the mock script's own problems included: this stops the
// fix-one-rerun-find-the-next loop, and a bench that starts half-valid.
func TestABadBenchReportsEveryProblemWithItsLine(t *testing.T) {
	for _, name := range []string{"bad", "syntax"} {
		t.Run(name, func(t *testing.T) {
			_, err := Load("testdata/bench/"+name+".yaml", checkScript)
			var be *Error
			if !errors.As(err, &be) {
				t.Fatalf("Load = %v, want a *Error", err)
			}
			checkGolden(t, "bench/"+name+".golden", be.Error()+"\n")
		})
	}
}

// Every field of a bench is read into the struct the runner uses; a field
// read into the wrong place would silently run a different experiment.
func TestEveryBenchFieldIsRead(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "ws"), 0o755)
	os.WriteFile(filepath.Join(dir, "r.yaml"), nil, 0o644)
	text := `description: all fields
runs: 2
timeout: 90s
sandbox: host-unsafe
require_pid_namespace: false
workers: 3
provider: {base_url: "https://api.example.com/", api_key_env: MY_KEY}
retries: {provider-error: 2, timeout: 1}
retry_budget: 7
breaker: 0
budget: 2.5
tasks:
  - id: review-1
    class: review
    workspace: ws
    prompt: review it
    setup: make deps
    verify: make test
    review: true
    verdict: request_changes
    expensive: true
    timeout: 5m
    provider: {mock: r.yaml}
    labels:
      - {id: L1, severity: high, path: ./src/a.go, line_start: 3, line_end: 9, category: security}
  - {id: git-1, workspace: {git: "https://example.com/r.git", ref: v1.2.3}, prompt: p}
arms:
  - id: a1
    agent: claude
    agent_bin: ./bin/claude
    model: claude-sonnet-4-5
    flags: [--verbose, --foo=bar]
    prompt_prefix: "pre "
    prompt_suffix: " post"
    allowed_tools: [Read, Write]
    max_turns: 12
    env: {FOO: {from_env: BAR}, LEVEL: {value: "3"}}
    provider: {mock: r.yaml}
  - {id: a2, agent: stand-in, env: [GH_TOKEN]}
`
	path := filepath.Join(dir, "b.yaml")
	os.WriteFile(path, []byte(text), 0o644)
	b, err := Load(path, checkScript)
	if err != nil {
		t.Fatal(err)
	}
	mockP := &Provider{Mock: filepath.Join(dir, "r.yaml")}
	want := &Bench{
		Path: path, Dir: dir, Digest: b.Digest, Description: "all fields",
		Runs: 2, Timeout: 90 * time.Second, Sandbox: wfb.SandboxHostUnsafe, Workers: 3,
		Provider: Provider{BaseURL: "https://api.example.com", APIKeyEnv: "MY_KEY"},
		Retries:  map[string]int{"provider-error": 2, "timeout": 1}, RetryBudget: 7, Breaker: 0, Budget: 2.5,
		Tasks: []Task{
			{ID: "review-1", Class: "review", Workspace: Workspace{Dir: filepath.Join(dir, "ws")}, Prompt: "review it",
				Setup: "make deps", Verify: "make test", Review: true, Verdict: "request_changes", Expensive: true,
				Timeout: 5 * time.Minute, Provider: mockP,
				Labels: []review.Label{{ID: "L1", Severity: "high", Path: "src/a.go", LineStart: 3, LineEnd: 9, Category: "security"}}},
			{ID: "git-1", Workspace: Workspace{Git: "https://example.com/r.git", Ref: "v1.2.3"}, Prompt: "p"},
		},
		Arms: []Arm{
			{ID: "a1", Agent: AgentClaude, AgentBin: filepath.Join(dir, "bin/claude"), Model: "claude-sonnet-4-5",
				Flags: []string{"--verbose", "--foo=bar"}, PromptPrefix: "pre ", PromptSuffix: " post",
				AllowedTools: []string{"Read", "Write"}, MaxTurns: 12, Provider: mockP,
				Env: []EnvVar{{Name: "FOO", FromEnv: "BAR"}, {Name: "LEVEL", Value: "3", Literal: true}}},
			{ID: "a2", Agent: AgentStandIn, Env: []EnvVar{{Name: "GH_TOKEN", FromEnv: "GH_TOKEN"}}},
		},
	}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("bench (-want +got):\n%s", diff)
	}
}

// The commented example shipped for users must stay a valid bench.
func TestTheExampleBenchIsValid(t *testing.T) {
	for _, name := range []string{"examples/bench.yaml", "examples/tools/bench.yaml"} {
		b, err := Load("../../"+name, checkScript)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(b.Tasks) == 0 || len(b.Arms) == 0 {
			t.Fatalf("%s has %d tasks and %d arms", name, len(b.Tasks), len(b.Arms))
		}
	}
}

// A pinned ref is a name, whatever YAML makes of it: a short commit id of
// digits only (about one in 50 commits) parses as an integer, one like
// "1e5" as a float. This test exists because such a commit id made the git
// workspace test fail at random.
func TestAGitRefIsReadAsWritten(t *testing.T) {
	dir := t.TempDir()
	for _, ref := range []string{"8960967220", "1e5", "0777", `"abc123"`, "v1.2.3"} {
		t.Run(ref, func(t *testing.T) {
			text := "provider: {base_url: http://127.0.0.1:1}\n" +
				"tasks:\n  - {id: t, prompt: p, workspace: {git: https://example.com/r.git, ref: " + ref + "}}\n" +
				"arms:\n  - {id: a, agent: stand-in}\n"
			b, err := Parse("bench.yaml", dir, []byte(text), nil)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			want := strings.Trim(ref, `"`)
			if got := b.Tasks[0].Workspace.Ref; got != want {
				t.Errorf("ref = %q, want %q", got, want)
			}
		})
	}
}

// A budget is a positive number of dollars: zero, a negative amount, a
// string such as "$5" or an infinity is refused, naming the field and
// what was given, never read as "no budget".
func TestABadBudgetIsRefusedNamingIt(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "r.yaml"), []byte("default: {text: hi}\n"), 0o644)
	os.Mkdir(filepath.Join(dir, "ws"), 0o755)
	for value, want := range map[string]string{
		"0":    "b.yaml:1:9: budget: must be a positive number of US dollars such as 25 or 2.5, got 0",
		"-3":   "b.yaml:1:9: budget: must be a positive number of US dollars such as 25 or 2.5, got -3",
		"-0.5": "b.yaml:1:9: budget: must be a positive number of US dollars such as 25 or 2.5, got -0.5",
		`"$5"`: "b.yaml:1:9: budget: must be a positive number of US dollars such as 25 or 2.5, got string \"$5\"",
		".inf": "b.yaml:1:9: budget: must be a positive number of US dollars such as 25 or 2.5, got .inf",
		"[1]":  "b.yaml:1:9: budget: must be a positive number of US dollars such as 25 or 2.5, got a list",
		"0.00": "b.yaml:1:9: budget: must be a positive number of US dollars such as 25 or 2.5, got 0.00",
		"0.01": "",
		"12":   "",
	} {
		t.Run(value, func(t *testing.T) {
			path := filepath.Join(dir, "b.yaml")
			text := "budget: " + value + "\nprovider: {mock: r.yaml}\ntasks: [{id: t, workspace: ws, prompt: p}]\narms: [{id: a, agent: stand-in}]\n"
			os.WriteFile(path, []byte(text), 0o644)
			b, err := Load(path, checkScript)
			if want == "" {
				if err != nil || b.Budget <= 0 {
					t.Fatalf("Load = %v, budget %v; want it read", err, b)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Load = %v\nwant %q", err, want)
			}
		})
	}
}

// TestRequireWitnessIsReadForTheBenchAndEachArm: require_witness is a
// bench field and an arm field, a strict bool at both (a string such as
// "yes" is refused naming the field, never read as false).
func TestRequireWitnessIsReadForTheBenchAndEachArm(t *testing.T) {
	dir := t.TempDir()
	parse := func(top, arm string) (*Bench, error) {
		text := top + "provider: {base_url: http://127.0.0.1:1}\n" +
			"tasks:\n  - {id: t, prompt: p, workspace: {git: https://example.com/r.git, ref: main}}\n" +
			"arms:\n  - {id: a, agent: stand-in" + arm + "}\n  - {id: b, agent: stand-in}\n"
		return Parse("bench.yaml", dir, []byte(text), nil)
	}
	b, err := parse("require_witness: true\n", ", require_witness: true")
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if !b.RequireWitness || !b.Arms[0].RequireWitness || b.Arms[1].RequireWitness {
		t.Errorf("bench %v, arms %v %v; want true, true, false", b.RequireWitness, b.Arms[0].RequireWitness, b.Arms[1].RequireWitness)
	}
	b, err = parse("", "")
	if err != nil || b.RequireWitness || b.Arms[0].RequireWitness {
		t.Errorf("by default: %v, %+v", err, b)
	}
	for _, c := range []struct{ top, arm, want string }{
		{"require_witness: yes\n", "", "require_witness"},
		{"", `, require_witness: "true"`, "arms[0].require_witness"},
	} {
		if _, err := parse(c.top, c.arm); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q%q: %v, want a refusal naming %s", c.top, c.arm, err, c.want)
		}
	}
}

// TestATopLevelProviderIsNeededOnlyForCellsWithoutOne stops a bench from
// being refused for lacking a top-level provider it would never use
// (every arm, or every task, names its own), and a bench whose cells
// would have no provider from saying only "is required": the refusal
// names the tasks and arms without one.
func TestATopLevelProviderIsNeededOnlyForCellsWithoutOne(t *testing.T) {
	dir := t.TempDir()
	const mock = "provider: {base_url: http://127.0.0.1:1}"
	parse := func(t1, t2, a, b string) (*Bench, error) {
		text := "tasks:\n" +
			"  - {id: t1, prompt: p, workspace: {git: https://example.com/r.git, ref: main}" + t1 + "}\n" +
			"  - {id: t2, prompt: p, workspace: {git: https://example.com/r.git, ref: main}" + t2 + "}\n" +
			"arms:\n  - {id: a, agent: stand-in" + a + "}\n  - {id: b, agent: stand-in" + b + "}\n"
		return Parse("bench.yaml", dir, []byte(text), nil)
	}
	for _, c := range []struct {
		name         string
		t1, t2, a, b string
		want         string
	}{
		{name: "every arm names one", a: ", " + mock, b: ", " + mock},
		{name: "every task names one", t1: ", " + mock, t2: ", " + mock},
		{name: "one task and one arm lack one", t1: ", " + mock, a: ", " + mock,
			want: "bench.yaml:1:1: provider: is required unless every task or every arm names one (a cell's provider is its arm's, else its task's, else this one): task t2 and arm b name none, so their cells would have no provider; give one here: {mock: FILE} for a dry run, or {base_url: URL, api_key_env: NAME}"},
		{name: "none names one",
			want: "provider: is required unless every task or every arm names one (a cell's provider is its arm's, else its task's, else this one): tasks t1, t2 and arms a, b name none"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := parse(c.t1, c.t2, c.a, c.b)
			if c.want == "" {
				if err != nil {
					t.Fatalf("parse: %v", err)
				}
				for _, task := range b.Tasks {
					for _, arm := range b.Arms {
						if p := b.ProviderFor(task, arm); p.BaseURL == "" {
							t.Errorf("cell %s × %s has no provider", task.ID, arm.ID)
						}
					}
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("parse = %v\nwant %q", err, c.want)
			}
		})
	}
}
