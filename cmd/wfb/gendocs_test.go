package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cliReference is the checked-in CLI reference, from this package.
const cliReference = "../../docs/cli"

// The CLI reference in docs/cli is generated from the commands and checked
// in. This test stops it drifting from them: it regenerates the reference
// and compares it byte for byte, both ways (a page missing, a page left
// over from a removed command). It regenerates with a results file in
// $WFB_DB, a narrow $COLUMNS, a SOURCE_DATE_EPOCH and another working
// directory, none of which may reach the text: the reference must be the
// same on any machine.
func TestDocCLIReferenceMatchesTheCommands(t *testing.T) {
	want, err := filepath.Abs(cliReference)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("WFB_DB", filepath.Join(t.TempDir(), "elsewhere.db"))
	t.Setenv("WFB_RUN_ID", "run-from-the-environment")
	t.Setenv("COLUMNS", "37")
	t.Setenv("SOURCE_DATE_EPOCH", "86400")
	t.Chdir(t.TempDir())
	got := t.TempDir()
	if err := writeCLIReference(got); err != nil {
		t.Fatal(err)
	}
	gotFiles, wantFiles := referenceFiles(t, got), referenceFiles(t, want)
	const fix = "regenerate it from the repository's root: " + regenerateDocs
	for _, name := range wantFiles {
		if !slices.Contains(gotFiles, name) {
			t.Errorf("docs/cli/%s is no longer generated (no such command?); %s", name, fix)
		}
	}
	for _, name := range gotFiles {
		g, err := os.ReadFile(filepath.Join(got, name))
		if err != nil {
			t.Fatal(err)
		}
		w, err := os.ReadFile(filepath.Join(want, name))
		switch {
		case err != nil:
			t.Errorf("docs/cli/%s is missing; %s", name, fix)
		case !bytes.Equal(g, w):
			t.Errorf("docs/cli/%s differs from the commands' help; %s", name, fix)
		}
	}
}

// Hidden commands are not part of the reference: gen-docs writes it, and
// is no command a user needs.
func TestDocCLIReferenceLeavesOutHiddenCommands(t *testing.T) {
	dir := t.TempDir()
	if err := writeCLIReference(dir); err != nil {
		t.Fatal(err)
	}
	files := referenceFiles(t, dir)
	for _, want := range []string{"wfb.md", "wfb_run.md", "wfb_init.md", "wfb_completion.md", "man/wfb.1", "man/wfb-run.1", "man/wfb-init.1"} {
		if !slices.Contains(files, want) {
			t.Errorf("no %s among %v", want, files)
		}
	}
	for _, name := range files {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(name, "gen-docs") || bytes.Contains(data, []byte("gen-docs")) {
			t.Errorf("%s mentions the hidden gen-docs command", name)
		}
	}
}

// referenceFiles lists the generated pages under dir (slash-separated,
// relative): markdown and man pages, not the README that says how to
// regenerate them.
func referenceFiles(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel != "README.md" {
			names = append(names, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}
