package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchema compiles report/schema/NAME.json, the published schema of
// a command's JSON output.
func compileSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "..", "report", "schema", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	sch, err := jsonschema.NewCompiler().Compile(path)
	if err != nil {
		t.Fatalf("schema %s: %v", name, err)
	}
	return sch
}

// validJSON validates a command's output against its schema, failing with
// where and why.
func validJSON(t *testing.T, sch *jsonschema.Schema, what, out string) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatalf("%s: output is not JSON: %v\n%s", what, err, out)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("%s: output does not match its schema:\n%v", what, err)
	}
}

// schemaRuns are real commands, on real results files, whose JSON output
// must match the schema of their command: the fixture of the report tests,
// the demo's file, which has review quality scores and retries, and the
// rescore tests' run and bench.
func schemaRuns(t *testing.T, fixture, demo string) map[string][][]string {
	bench, scored := rescoreFixture(t)
	dir := t.TempDir()
	return map[string][][]string{
		"merge":   {{"merge", "--into", filepath.Join(dir, "merged.db"), demo, fixture}},
		"rescore": {{"rescore", "run-r", "--bench", bench, "--db", scored}},
		"runs":    {{"runs", "--db", fixture}, {"runs", "--db", demo}},
		"report": {
			{"report", "base", "cand", "--db", fixture},
			{"report", "r1", "--by", "task,arm", "--db", fixture},
			{"report", "--db", demo},
			{"report", "--by", "task,arm", "--db", demo},
			{"report", "--usage", "reported", "--db", demo},
			{"demo", "--db", filepath.Join(dir, "demo.db")}, // the demo prints its report
		},
		"diff": {
			{"diff", "base", "cand", "--db", fixture},
			{"diff", "r1", "r2", "--by", "task,arm", "--detect", "10%,5pp", "--db", fixture},
			{"diff", "arm=baseline", "arm=thorough", "--detect", "10%", "--db", demo},
			{"diff", "arm=baseline", "arm=gateway", "--by", "task,arm", "--db", demo},
		},
		"trend": {
			{"trend", "--by", "day", "--db", fixture},
			{"trend", "--by", "run", "--baseline", "r1", "--detect", "5pp", "--db", fixture},
			{"trend", "arm=candidate", "--by", "label", "--metric", "cost_usd", "--db", fixture},
		},
	}
}

// TestJSONOutputMatchesThePublishedSchemas stops a command whose JSON
// drifts from report/schema/*.json, the contract programs are written
// against: a field gained or lost, a type changed, a number written as a
// string. Each command runs for real on real results files.
func TestJSONOutputMatchesThePublishedSchemas(t *testing.T) {
	t.Parallel()
	fixture := reportFixture(t)
	_, demo := demoResults(t)
	for name, runs := range schemaRuns(t, fixture, demo) {
		sch := compileSchema(t, name)
		for _, args := range runs {
			out, errOut, code := wfbCmd(t, append(args, "--format", "json")...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errOut)
			}
			validJSON(t, sch, strings.Join(args, " "), out)
		}
	}
	// doctor probes this machine's sandboxes for real; it exits 1 when
	// none is usable, and its JSON says so in the same shape.
	out, errOut, code := wfbCmd(t, "doctor", "--format", "json")
	if code != 0 && code != 1 {
		t.Fatalf("doctor: exit %d: %s", code, errOut)
	}
	validJSON(t, compileSchema(t, "doctor"), "doctor", out)
}

// TestSchemasRefuseADriftedOutput proves the schemas can fail: the real
// output of each command, with a field added, a field removed or a number
// turned into a string, no longer validates. A schema that accepted any
// object would pass the test above and check nothing.
func TestSchemasRefuseADriftedOutput(t *testing.T) {
	fixture := reportFixture(t)
	for _, c := range []struct {
		schema string
		args   []string
		field  string // a field every row has, and whose value is a number
	}{
		{"runs", []string{"runs"}, "cells"},
		{"report", []string{"report", "base", "cand"}, "cells"},
		{"diff", []string{"diff", "base", "cand"}, "n_a"},
		{"trend", []string{"trend", "--by", "day"}, "n"},
	} {
		sch := compileSchema(t, c.schema)
		out, errOut, code := wfbCmd(t, append(c.args, "--db", fixture, "--format", "json")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		for _, drift := range []struct {
			name   string
			change func(row map[string]any)
		}{
			{"a field gained", func(row map[string]any) { row["surprise"] = 1 }},
			{"a field lost", func(row map[string]any) { delete(row, c.field) }},
			{"a number as a string", func(row map[string]any) { row[c.field] = "12" }},
		} {
			var doc any
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			rows, _ := doc.([]any)
			if obj, ok := doc.(map[string]any); ok {
				rows, _ = obj["rows"].([]any)
			}
			if len(rows) == 0 {
				t.Fatalf("%s: no rows in %s", c.schema, out)
			}
			drift.change(rows[0].(map[string]any))
			b, _ := json.Marshal(doc)
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if err := sch.Validate(inst); err == nil {
				t.Errorf("%s schema accepts its output with %s (%s)", c.schema, drift.name, c.field)
			}
		}
	}
}
