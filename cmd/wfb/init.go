package main

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// initData is the starter bench `wfb init` writes: bench.yaml, its mock
// script and a workspace with a bug to fix. As for examples/_workspaces,
// the leading underscore keeps the go tool out.
//
//go:embed _initdata
var initData embed.FS

const initRoot = "_initdata"

type initOptions struct {
	Dir string
}

func newInitCmd(s *Streams) *cobra.Command {
	opts := &initOptions{}
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Write a starter bench to edit into your own",
		Long: `Write a starter bench into DIR (default: the current directory, created
when missing): bench.yaml, one task and two arms — a baseline and a
candidate with a prompt prefix — commented field by field; replies.yaml, the
script of the mock provider the bench uses, so that it runs offline as it
stands; and workspace/sum.sh, a small buggy script the task asks the agent
to fix, which the task's verify command checks by running it.

init never overwrites: when a file it would write exists, or something
else is in the way, it names them, writes nothing, and exits 2.`,
		Example: `  wfb init
  wfb init my-bench
  wfb run my-bench/bench.yaml --label first`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = "."
			if len(args) == 1 {
				opts.Dir = args[0]
			}
			return initRun(s, opts)
		},
	}
	return cmd
}

func initRun(s *Streams, opts *initOptions) error {
	files, err := initFiles()
	if err != nil {
		return err
	}
	// Every path is checked before anything is written: a refusal leaves
	// the directory as it was.
	if err := initRefusal(opts.Dir, files); err != nil {
		return err
	}
	for _, name := range files {
		if err := initWrite(opts.Dir, name); err != nil {
			return err
		}
	}
	exe, _ := os.Executable()
	wfb := hintCommand(exe, exec.LookPath)
	bench := filepath.Join(opts.Dir, "bench.yaml")
	where := "in " + opts.Dir
	if filepath.Clean(opts.Dir) == "." {
		where = "in the current directory"
	}
	fmt.Fprintf(s.Out, "Wrote a starter bench %s:\n", where)
	for _, name := range files {
		fmt.Fprintf(s.Out, "  %s\n", filepath.Join(opts.Dir, filepath.FromSlash(name)))
	}
	fmt.Fprintf(s.Out, "\nIt runs offline as it stands (a scripted mock provider and wfb's stand-in\nagent). Next:\n")
	db := dbPath("", s)
	if !filepath.IsAbs(db) && !strings.HasPrefix(db, ".") {
		db = "./" + db
	}
	next := [][2]string{
		{wfb + " run " + bench + " --label first", "1 task × 2 arms × 3 reps, into " + db},
		{wfb + " report", "outcomes and medians per arm"},
		{wfb + " diff arm=baseline arm=candidate", "did the prompt prefix change anything?"},
	}
	width := 0
	for _, n := range next {
		width = max(width, len(n[0]))
	}
	for _, n := range next {
		fmt.Fprintf(s.Out, "  %-*s   # %s\n", width, n[0], n[1])
	}
	fmt.Fprintf(s.Out, "\nThen edit %s into your own bench: your workspace, prompt and verify\n"+
		"command, a real agent and provider (its comments show how).\n", bench)
	return nil
}

// initFiles lists the files of the starter bench, slash-separated and
// relative to DIR, in a stable order.
func initFiles() ([]string, error) {
	var files []string
	err := fs.WalkDir(initData, initRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files = append(files, strings.TrimPrefix(p, initRoot+"/"))
		return nil
	})
	return files, err
}

// initRefusal says why init must not write files into dir: some exist
// already (init never overwrites; all of them are named), or something that
// is not a directory stands where a directory must be (named).
func initRefusal(dir string, files []string) error {
	dirs := map[string]bool{}
	for _, name := range files {
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	check := []string{dir}
	for d := range dirs {
		check = append(check, filepath.Join(dir, filepath.FromSlash(d)))
	}
	for _, d := range check {
		fi, err := os.Stat(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return badInput("%v", err)
		case !fi.IsDir():
			return badInput("%s is in the way: init needs a directory there (nothing written)", d)
		}
	}
	var exist []string
	for _, name := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if _, err := os.Lstat(p); err == nil {
			exist = append(exist, p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return badInput("%v", err)
		}
	}
	switch len(exist) {
	case 0:
		return nil
	case 1:
		return badInput("%s exists: init never overwrites a file (nothing written)", exist[0])
	default:
		return badInput("%s exist: init never overwrites a file (nothing written)", strings.Join(exist, ", "))
	}
}

// initWrite writes one file of the starter bench under dir, creating its
// directories: directories 0755 and files 0644, readable by the
// unprivileged uid sessions run as. O_EXCL: a file that appeared since the
// check is not overwritten either.
func initWrite(dir, name string) error {
	data, err := initData.ReadFile(initRoot + "/" + name)
	if err != nil {
		return err
	}
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return badInput("%s exists: init never overwrites a file", p)
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", p, err)
	}
	return f.Close()
}
