package scaling

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rhysd/actionlint"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/wfbench/wfb/runner/bench"
)

const (
	jobFile      = "k8s-indexed-job.yaml"
	workflowFile = "github-actions-matrix.yml"
	docFile      = "../../docs/scaling-out.md"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDocShowsTheExamplesVerbatim stops docs/scaling-out.md from drifting
// away from the files this directory holds (and the tests below check): each
// example is shown once, as it is, in the fenced block after its marker.
func TestDocShowsTheExamplesVerbatim(t *testing.T) {
	files := map[string][]byte{}
	for _, name := range []string{jobFile, workflowFile} {
		files["examples/scaling/"+name] = read(t, name)
	}
	for _, p := range docDrift(read(t, docFile), files) {
		t.Error(p)
	}
}

// exampleMarker precedes a fenced block that must be the named file verbatim.
var exampleMarker = regexp.MustCompile(`(?m)^<!-- example: (\S+) .*-->\n` + "```" + `[a-z]*\n`)

// docDrift reports every file not shown exactly once after its marker, every
// block that differs from its file, and every marker naming no file.
func docDrift(doc []byte, files map[string][]byte) []string {
	var problems []string
	shown := map[string]int{}
	for _, m := range exampleMarker.FindAllSubmatchIndex(doc, -1) {
		name := string(doc[m[2]:m[3]])
		shown[name]++
		want, ok := files[name]
		if !ok {
			problems = append(problems, fmt.Sprintf("marker names %s, which is not an example", name))
			continue
		}
		rest := doc[m[1]:]
		end := bytes.Index(rest, []byte("\n```\n"))
		if end < 0 {
			problems = append(problems, fmt.Sprintf("%s: the block after its marker is not closed", name))
			continue
		}
		if diff := cmp.Diff(string(want), string(rest[:end+1])); diff != "" {
			problems = append(problems, fmt.Sprintf("%s: the doc's block differs from the file (-file +doc):\n%s", name, diff))
		}
	}
	for name := range files {
		if shown[name] != 1 {
			problems = append(problems, fmt.Sprintf("%s is shown %d times, want once", name, shown[name]))
		}
	}
	slices.Sort(problems)
	return problems
}

// TestIndexedJobIsAJobShardedTheWayWfbReadsIt stops the Job example from
// being a Job Kubernetes would refuse (a misspelled or misplaced field is an
// error here, not silently dropped) or one whose pods would not each run a
// distinct shard of the same run.
func TestIndexedJobIsAJobShardedTheWayWfbReadsIt(t *testing.T) {
	for _, p := range jobProblems(read(t, jobFile)) {
		t.Error(p)
	}
}

// jobProblems decodes a Job strictly into batch/v1 types and checks what wfb
// relies on.
func jobProblems(data []byte) []string {
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(data, &job); err != nil {
		return []string{fmt.Sprintf("not a batch/v1 Job: %v", err)}
	}
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	if job.APIVersion != "batch/v1" || job.Kind != "Job" {
		bad("apiVersion %q kind %q, want batch/v1 Job", job.APIVersion, job.Kind)
	}
	spec := job.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		bad("completionMode is not Indexed: pods get no JOB_COMPLETION_INDEX")
	}
	if spec.Completions == nil || *spec.Completions < 1 {
		bad("completions is not set: an Indexed Job needs it, and it is the shard count")
		return problems
	}
	n := int(*spec.Completions)
	if p := spec.Parallelism; p != nil && (*p < 1 || int(*p) > n) {
		bad("parallelism %d is not within 1..completions %d", *p, n)
	}
	if rp := spec.Template.Spec.RestartPolicy; rp != corev1.RestartPolicyNever && rp != corev1.RestartPolicyOnFailure {
		bad("restartPolicy %q: a Job's pods must be Never or OnFailure", rp)
	}
	runs := 0
	for _, c := range spec.Template.Spec.Containers {
		command := strings.Join(append(slices.Clone(c.Command), c.Args...), " ")
		if !strings.Contains(command, "wfb run") {
			continue
		}
		runs++
		env := map[string]string{}
		for _, e := range c.Env {
			env[e.Name] = e.Value
		}
		if _, ok := env[bench.EnvJobCompletionIndex]; ok {
			bad("container %s sets %s: Kubernetes sets it, one value per pod", c.Name, bench.EnvJobCompletionIndex)
		}
		if env["WFB_RUN_ID"] == "" && !strings.Contains(command, "--run-id") {
			bad("container %s names no run id (WFB_RUN_ID or --run-id): the shards would not record into one run", c.Name)
		}
		if !strings.Contains(command, "--db") || !strings.Contains(command, "$"+bench.EnvJobCompletionIndex) {
			bad("container %s: its --db does not name the pod's $%s: the shards would share one results file", c.Name, bench.EnvJobCompletionIndex)
		}
		// Each pod, given its index the way Kubernetes does, must read
		// itself as shard i of completions through wfb's own reader.
		for i := range n {
			podEnv := func(k string) string {
				if k == bench.EnvJobCompletionIndex {
					return strconv.Itoa(i)
				}
				return env[k]
			}
			gi, gn, ok, err := bench.ShardFromEnv(podEnv)
			if err != nil || !ok || gi != i || gn != n {
				bad("container %s, pod %d of %d: wfb reads shard %d/%d (ok %v, err %v), want %d/%d", c.Name, i, n, gi, gn, ok, err, i, n)
				break
			}
		}
	}
	if runs != 1 {
		bad("%d containers run `wfb run`, want 1", runs)
	}
	return problems
}

// TestWorkflowPassesActionlint stops the CI example from being a workflow
// GitHub would refuse or mis-run: actionlint checks its syntax, the inputs of
// the actions it uses, and every ${{ }} expression against the contexts
// (matrix, secrets, github) that exist there.
func TestWorkflowPassesActionlint(t *testing.T) {
	for _, p := range workflowProblems(t, workflowFile, read(t, workflowFile)) {
		t.Error(p)
	}
}

// workflowProblems lints a workflow with actionlint's own rules only:
// shellcheck and pyflakes are external commands and are left off (empty
// paths), so the test needs nothing installed.
func workflowProblems(t *testing.T, path string, content []byte) []string {
	t.Helper()
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{Shellcheck: "", Pyflakes: ""})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.Lint(path, content, nil)
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	for _, e := range errs {
		problems = append(problems, fmt.Sprintf("%s:%d:%d: %s [%s]", filepath.Base(e.Filepath), e.Line, e.Column, e.Message, e.Kind))
	}
	return problems
}

// TestExampleChecksFailOnAMistake keeps the three tests above able to fail:
// one small mistake in each file, or in the doc's copy, is reported.
func TestExampleChecksFailOnAMistake(t *testing.T) {
	job, wf, doc := string(read(t, jobFile)), string(read(t, workflowFile)), string(read(t, docFile))
	edit := func(t *testing.T, s, old, new string) string {
		t.Helper()
		if !strings.Contains(s, old) {
			t.Fatalf("%q is not in the example: the mutation is stale", old)
		}
		return strings.Replace(s, old, new, 1)
	}
	tests := []struct {
		name      string
		problems  func(t *testing.T) []string
		wantMatch string
	}{
		{"misspelled Job field", func(t *testing.T) []string {
			return jobProblems([]byte(edit(t, job, "completionMode:", "completionMod:")))
		}, `unknown field "completionMod"`},
		{"field in the wrong place", func(t *testing.T) []string {
			return jobProblems([]byte(edit(t, job, "      restartPolicy: Never", "      restartPolicy: Never\n      parallelism: 8")))
		}, `unknown field "parallelism"`},
		{"NonIndexed Job", func(t *testing.T) []string {
			return jobProblems([]byte(edit(t, job, "completionMode: Indexed", "completionMode: NonIndexed")))
		}, "completionMode is not Indexed"},
		{"shard count not the completions", func(t *testing.T) []string {
			return jobProblems([]byte(edit(t, job, `{name: WFB_SHARD_COUNT, value: "8"}`, `{name: WFB_SHARD_COUNT, value: "4"}`)))
		}, "wfb reads shard"},
		{"parallelism above completions", func(t *testing.T) []string {
			return jobProblems([]byte(edit(t, job, "parallelism: 8", "parallelism: 9")))
		}, "parallelism 9 is not within"},
		{"wrong matrix property", func(t *testing.T) []string {
			return workflowProblems(t, workflowFile, []byte(edit(t, wf, "--db shard-${{ matrix.shard }}.db", "--db shard-${{ matrix.shards }}.db")))
		}, `property "shards" is not defined`},
		{"unknown action input", func(t *testing.T) []string {
			return workflowProblems(t, workflowFile, []byte(edit(t, wf, "merge-multiple: true", "merge_multiple: true")))
		}, `input "merge_multiple" is not defined`},
		{"doc drifted from the file", func(t *testing.T) []string {
			return docDrift([]byte(edit(t, doc, "parallelism: 8", "parallelism: 4")), map[string][]byte{"examples/scaling/" + jobFile: []byte(job)})
		}, "the doc's block differs from the file"},
		{"doc lost its marker", func(t *testing.T) []string {
			return docDrift([]byte(edit(t, doc, "<!-- example: examples/scaling/"+workflowFile, "<!-- ")), map[string][]byte{"examples/scaling/" + workflowFile: []byte(wf)})
		}, "is shown 0 times"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			problems := tt.problems(t)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tt.wantMatch) }) {
				t.Errorf("problems %q, want one containing %q", problems, tt.wantMatch)
			}
		})
	}
}
