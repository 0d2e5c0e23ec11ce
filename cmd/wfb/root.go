package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/internal/termtext"
	"github.com/wfbench/wfb/runner/proc"
)

// version is the harness version recorded with every run; release builds set
// it with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// Main runs wfb with args (without the program name) and returns the exit
// code.
func Main(args []string, s *Streams) int {
	ctx, stop := interruptible(context.Background(), stopSignals())
	defer stop()
	endWithGoRun()
	return run(ctx, args, s)
}

// interruptible returns ctx cancelled at the first of sigs — the command
// stops, recording what was in flight — and hurried (proc.WithHurry) at
// the second: sessions still being stopped are killed at once rather than
// after their grace period, and are still recorded. stop stops the
// handling.
func interruptible(ctx context.Context, sigs []os.Signal) (_ context.Context, stop func()) {
	if len(sigs) == 0 {
		return ctx, func() {} // Notify with no signal would relay every one
	}
	ctx, cancel := context.WithCancel(ctx)
	hurry := make(chan struct{})
	got := make(chan os.Signal, 2)
	signal.Notify(got, sigs...)
	go func() {
		select {
		case <-got:
		case <-ctx.Done():
			return
		}
		cancel()
		<-got
		close(hurry)
	}()
	return proc.WithHurry(ctx, hurry), func() {
		signal.Stop(got)
		cancel()
	}
}

// endWithGoRun makes a wfb started by `go run` (README's way in) end with
// the go command: go exits at SIGTERM or SIGHUP without passing it on, and
// wfb, left alone, would run to the end of its run. wfb watches that parent
// (a pidfd turns readable when the process is gone — PR_SET_PDEATHSIG
// would follow the thread that forked wfb, which may end before go does)
// and then sends itself SIGTERM, to stop as at the signal itself: the
// cells in flight recorded cancelled, no agent left.
func endWithGoRun() {
	ppid := os.Getppid()
	exe, err := os.Readlink("/proc/" + strconv.Itoa(ppid) + "/exe")
	if err != nil || filepath.Base(exe) != "go" {
		return
	}
	fd, err := unix.PidfdOpen(ppid, 0)
	if err != nil {
		return
	}
	go func() {
		defer unix.Close(fd)
		// Opened after go was gone, the pidfd would watch another process.
		for os.Getppid() == ppid {
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, err := unix.Poll(fds, -1)
			if err == nil && n > 0 {
				break
			}
			if err != nil && err != unix.EINTR {
				return
			}
		}
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}()
}

// stopSignals are the signals that interrupt wfb (the cells in flight are
// recorded cancelled, the run interrupted): SIGINT, SIGTERM and SIGHUP, but
// not one wfb was started with ignored. nohup(1) ignores SIGHUP so that a
// long run outlives its terminal, a shell without job control starts
// `wfb run ... &` with SIGINT ignored, and Go's Notify would handle such a
// signal again.
func stopSignals() []os.Signal {
	var sigs []os.Signal
	for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(sig) {
			sigs = append(sigs, sig)
		}
	}
	return sigs
}

func run(ctx context.Context, args []string, s *Streams) int {
	root := newRootCmd(s)
	root.SetArgs(args)
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.ErrOut)
	err := root.ExecuteContext(ctx)
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		// A signal stopped the command: say so, not "context canceled".
		err = errInterrupted
	}
	if err != nil && !errors.Is(err, errNotOK) {
		// An error can quote an agent's output or a bench's names: its
		// controls are shown, not obeyed.
		fmt.Fprintf(s.ErrOut, "wfb: %s\n", termtext.Show(err.Error(), "\t\n"))
	}
	return exitCode(err)
}

func newRootCmd(s *Streams) *cobra.Command {
	root := &cobra.Command{
		Use:           "wfb",
		Short:         "A results workbench for benchmarking coding-agent workflows",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// Flag errors are bad input: exit 2.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return asBadInput(err) })
	root.AddCommand(
		newDemoCmd(s),
		newSQLCmd(s),
		newMockCmd(s),
		newSessionCmd(s),
		newRunsCmd(s),
		newReportCmd(s),
		newDiffCmd(s),
		newTrendCmd(s),
		newExportCmd(s),
		newRunCmd(s),
		newRescoreCmd(s),
		newMergeCmd(s),
		newUpgradeCmd(s),
		newDoctorCmd(s),
		newViewCmd(s),
		newProxyCmd(s),
		newInitCmd(s),
		newGenDocsCmd(),
	)
	completionHelp(root, s)
	// An unknown command is bad input (exit 2), not a help page with exit 0;
	// a bare `wfb` prints the help.
	root.Args = cobra.ArbitraryArgs
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return badInput("unknown command %q for wfb (see wfb --help)", strings.Join(args, " "))
		}
		return cmd.Help()
	}
	return root
}

// dbPath resolves the results file: the flag, then WFB_DB, then ./wfb.db.
func dbPath(flag string, s *Streams) string {
	if flag != "" {
		return flag
	}
	if env := s.Getenv("WFB_DB"); env != "" {
		return env
	}
	return "wfb.db"
}

// completionInstall is how each shell's completion is installed for every
// new session, in places the user can write (cobra's own examples write
// to /etc, which only root can), a system-wide place marked as needing
// root last.
var completionInstall = map[string]string{
	"bash": `To load completions in your current shell session:

	source <(wfb completion bash)

To load completions for every new session (bash-completion 2.x loads them
from this directory on demand), execute once:

	mkdir -p ~/.local/share/bash-completion/completions
	wfb completion bash > ~/.local/share/bash-completion/completions/wfb

System-wide (needs root):

	sudo sh -c 'wfb completion bash > /usr/share/bash-completion/completions/wfb'

This script depends on the 'bash-completion' package. You will need to start
a new shell for this setup to take effect.
`,
	"zsh": `If shell completion is not already enabled in your environment you will need
to enable it. You can execute the following once:

	echo "autoload -U compinit; compinit" >> ~/.zshrc

To load completions in your current shell session:

	source <(wfb completion zsh)

To load completions for every new session, put the script in a directory of
your own and add that directory to fpath before compinit runs, once:

	mkdir -p ~/.zfunc
	wfb completion zsh > ~/.zfunc/_wfb
	echo 'fpath=(~/.zfunc $fpath)' >> ~/.zshrc   # before the compinit line

System-wide (needs root):

	sudo sh -c 'wfb completion zsh > /usr/local/share/zsh/site-functions/_wfb'

You will need to start a new shell for this setup to take effect.
`,
	"fish": `To load completions in your current shell session:

	wfb completion fish | source

To load completions for every new session, execute once:

	mkdir -p ~/.config/fish/completions
	wfb completion fish > ~/.config/fish/completions/wfb.fish

System-wide (needs root):

	sudo sh -c 'wfb completion fish > /usr/share/fish/vendor_completions.d/wfb.fish'

You will need to start a new shell for this setup to take effect.
`,
}

// completionHelp adds cobra's completion command now, rather than when it
// runs, so its help can say where a user installs the scripts without
// root. Its commands write where root's do, to s.Out.
func completionHelp(root *cobra.Command, s *Streams) {
	root.SetOut(s.Out)
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		for _, sh := range c.Commands() {
			if text, ok := completionInstall[sh.Name()]; ok {
				sh.Long = "Generate the autocompletion script for the " + sh.Name() + " shell.\n\n" + text
			}
		}
	}
}
