package runner

// Arms that differ by tools and skills, end to end: the stand-in agent (a
// real subprocess) given the stand-in MCP server (a real subprocess it
// starts, this test binary as wfb), a skill and files by its arm; a real
// mock provider scripting the calls; rows in a real SQLite file.

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/testkit/sandboxtest"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

func TestAnArmsToolsAndSkillsAreUsedCountedAndExpected(t *testing.T) {
	for _, backend := range []string{sandbox.HostUnsafe, sandbox.Bwrap, sandbox.Landlock} {
		t.Run(backend, func(t *testing.T) {
			sandboxtest.RequireBackend(t, backend)
			testArmKit(t, backend)
		})
	}
}

func testArmKit(t *testing.T, backend string) {
	r := newBenchRig(t)
	r.file("skills/review/SKILL.md", "---\nname: review\ndescription: how to review\n---\nLook twice.\n")
	r.file("guide.md", "GUIDE-MARKER\n")
	// Turn 1: an MCP tool, the skill and a shell command that copies the
	// HOME file where verify checks it, beside the MCP server's log of the
	// call (the arms without the script's tools have nothing to check);
	// turn 2: done.
	r.file("uses.yaml", `replies:
  - tools:
      - {name: mcp__code__echo, input: {text: hi}}
      - {name: Skill, input: {skill: review}}
      - {name: Bash, input: {command: 'touch used-tools; cp "$HOME/.claude/CLAUDE.md" home-copy.md'}}
    usage: {input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
`+okScript)
	r.file("plain.yaml", okScript)
	b := r.bench(`sandbox: ` + backend + `
provider: {mock: uses.yaml}
tasks:
  - id: fix
    workspace: ws
    prompt: "use your tools"
    verify: "if [ -e used-tools ]; then grep -q GUIDE-MARKER NOTES.md && grep -q GUIDE-MARKER home-copy.md && grep -q '\"text\":\"hi\"' calls.jsonl; fi"
arms:
  - id: with-tools
    agent: stand-in
    max_turns: 3
    mcp_servers:
      code: {command: wfb, args: [mock, mcp-server, --log, calls.jsonl]}
    skills: [skills/review]
    files:
      - {from: guide.md, to: home/.claude/CLAUDE.md}
      - {from: guide.md, to: workspace/NOTES.md}
    expect_tools: ["mcp__code__*", "skill:review"]
  - id: unused
    agent: stand-in
    provider: {mock: plain.yaml}
    mcp_servers:
      code: {command: wfb, args: [mock, mcp-server]}
    expect_tools: ["mcp__code__*"]
  - id: baseline
    agent: stand-in
    provider: {mock: plain.yaml}
  - id: broken
    agent: stand-in
    provider: {mock: plain.yaml}
    mcp_servers:
      code: {command: /bin/false}
`)
	_, rows := r.sweep(context.Background(), r.opts(b))
	byArm := map[string]store.Result{}
	for _, row := range rows {
		byArm[row.Arm] = row
	}
	with := byArm["with-tools"]
	if !with.OK {
		t.Fatalf("with-tools: %s: %s", with.ErrorKind, with.ErrorDetail)
	}
	want := []store.ToolUse{{Tool: "Bash", Calls: 1}, {Tool: "mcp__code__echo", Calls: 1}, {Tool: "skill:review", Calls: 1}}
	if diff := cmp.Diff(want, with.ToolUses); diff != "" || with.ToolCalls == nil || *with.ToolCalls != 3 {
		t.Errorf("with-tools: tool_calls %v, uses (-want +got):\n%s", deref(with.ToolCalls), diff)
	}
	unused := byArm["unused"]
	if unused.OK || unused.ErrorKind != wfb.KindWorkflowNotUsed || !strings.Contains(unused.ErrorDetail, "mcp__code__*") {
		t.Errorf("unused: ok=%v %s: %s; want workflow-not-used naming the pattern", unused.OK, unused.ErrorKind, unused.ErrorDetail)
	}
	// A server that dies before it answers: the session ran without the
	// arm's tools, which is the environment's fault, not the workflow's.
	broken := byArm["broken"]
	if broken.OK || broken.ErrorKind != wfb.KindInfraError || !strings.Contains(broken.ErrorDetail, "did not start") || !strings.Contains(broken.ErrorDetail, "code") {
		t.Errorf("broken: ok=%v %s: %s; want infra-error naming the server that did not start", broken.OK, broken.ErrorKind, broken.ErrorDetail)
	}
	base := byArm["baseline"]
	if !base.OK || base.ToolCalls == nil || *base.ToolCalls != 0 || len(base.ToolUses) != 0 {
		t.Errorf("baseline: ok=%v tool_calls=%v uses=%v; want ok with tool_calls measured 0", base.OK, deref(base.ToolCalls), base.ToolUses)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// A server's secret is a secret whatever its name: DB_URL does not look
// like one, and its value — which the agent's environment holds for the
// server — is scrubbed from the row, the transcript and the requests on
// the wire alike.
func TestAServerSecretIsScrubbedWhateverItsName(t *testing.T) {
	r := newBenchRig(t)
	const value = "Zq9xPlainValue77abc"
	r.env["KIT_DB"] = value
	r.file("leak.yaml", `replies:
  - tools: [{name: Bash, input: {command: 'echo "db=$DB_URL"'}}]
    usage: {input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
`+okScript)
	b := r.bench(`sandbox: host-unsafe
provider: {mock: leak.yaml}
tasks: [{id: t, workspace: ws, prompt: "show it"}]
arms:
  - id: a
    agent: stand-in
    max_turns: 2
    mcp_servers:
      code: {command: wfb, args: [mock, mcp-server], env: {DB_URL: {from_env: KIT_DB}}}
`)
	_, rows := r.sweep(context.Background(), r.opts(b))
	if len(rows) != 1 || !rows[0].OK {
		t.Fatalf("rows %+v", rows)
	}
	ctx := context.Background()
	var texts []string
	tr, err := r.db.Transcript(ctx, rows[0].AttemptID)
	if err != nil {
		t.Fatal(err)
	}
	texts = append(texts, unzstd(t, tr.Data), rows[0].StdoutTail, rows[0].ResultEvent)
	reqs, err := r.db.Requests(ctx, rows[0].AttemptID)
	if err != nil || len(reqs) < 2 {
		t.Fatalf("requests %d, %v: want the two turns metered", len(reqs), err)
	}
	for _, q := range reqs {
		x, err := r.db.Exchange(ctx, q.RequestID)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, unzstd(t, x.RequestBody), unzstd(t, x.ResponseBody))
	}
	all := strings.Join(texts, "\n")
	if !strings.Contains(all, "db=") {
		t.Fatalf("the Bash output never reached the record; the test shows nothing")
	}
	if strings.Contains(all, value) {
		t.Errorf("the server's secret is in the record: %q", all[max(0, strings.Index(all, value)-40):][:80])
	}
}

func unzstd(t *testing.T, b []byte) string {
	t.Helper()
	if len(b) == 0 {
		return ""
	}
	d, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	out, err := d.DecodeAll(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// A call that failed is not a use: a tool the server does not have and a
// skill the agent does not know are called, counted — and leave the
// workflow unused.
func TestACallThatFailedDoesNotMeetAnExpectation(t *testing.T) {
	r := newBenchRig(t)
	r.file("fake.yaml", `default:
  tools:
    - {name: mcp__code__made_up, input: {}}
    - {name: Skill, input: {skill: nonexistent}}
  usage: {input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
`)
	b := r.bench(`sandbox: host-unsafe
provider: {mock: fake.yaml}
tasks: [{id: t, workspace: ws, prompt: "pretend"}]
arms:
  - id: a
    agent: stand-in
    mcp_servers: {code: {command: wfb, args: [mock, mcp-server]}}
    expect_tools: ["mcp__code__*"]
  - id: s
    agent: stand-in
    expect_tools: ["skill:*"]
`)
	_, rows := r.sweep(context.Background(), r.opts(b))
	for _, row := range rows {
		if row.OK || row.ErrorKind != wfb.KindWorkflowNotUsed || row.ToolCalls == nil || *row.ToolCalls != 2 {
			t.Errorf("arm %s: ok=%v %s: %s, tool_calls %v; want workflow-not-used with both calls counted", row.Arm, row.OK, row.ErrorKind, row.ErrorDetail, deref(row.ToolCalls))
		}
	}
}
