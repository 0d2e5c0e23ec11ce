package proc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wfbench/wfb/internal/testkit/gate"
)

// The test binary doubles as the processes Run drives (the os/exec
// helper-process pattern): WFB_PROC_HELPER=<mode> makes it one of the
// misbehaving processes below. It serves agent-exec too: it links
// internal/agentexec, whose init takes the process over when it is
// re-executed as `TEST agent-exec ...`, as wfb's is.
func TestMain(m *testing.M) {
	if mode := os.Getenv("WFB_PROC_HELPER"); mode != "" {
		os.Exit(helperProcess(mode))
	}
	code := m.Run()
	gate.Report("runner/proc")
	if sharedBin != "" {
		os.RemoveAll(filepath.Dir(sharedBin))
	}
	os.Exit(code)
}

var (
	sharedBinOnce sync.Once
	sharedBin     string
	sharedBinErr  error
)

// helperProcess is a process that behaves the way a broken agent might.
func helperProcess(mode string) int {
	switch mode {
	case "print-env-and-stdin":
		in, _ := io.ReadAll(os.Stdin)
		for _, kv := range os.Environ() {
			fmt.Println("env " + kv)
		}
		fmt.Println("stdin " + string(in))
		return 0
	case "ignore-term-with-grandchild", "exit-leaving-grandchild", "exit-leaving-setsid-grandchild":
		// The grandchild ignores SIGTERM and would live forever; it writes
		// its pid where the test can find it.
		gc := exec.Command(os.Args[0])
		gc.Env = append(os.Environ(), "WFB_PROC_HELPER=grandchild")
		if mode == "exit-leaving-setsid-grandchild" {
			// It leaves the process group: only a cgroup still holds it.
			gc.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			gc.Stdout, gc.Stderr = nil, nil
		}
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		os.WriteFile(os.Getenv("WFB_PIDFILE"), []byte(fmt.Sprint(gc.Process.Pid)), 0o644)
		if mode != "ignore-term-with-grandchild" {
			fmt.Println(`{"type":"result"}`)
			return 0
		}
		signal.Ignore(syscall.SIGTERM)
		time.Sleep(time.Hour)
		return 0
	case "grandchild":
		signal.Ignore(syscall.SIGTERM)
		time.Sleep(time.Hour)
		return 0
	case "exit-on-term":
		// Sleep until SIGTERM arrives; the default action ends us.
		time.Sleep(time.Hour)
		return 0
	case "huge-output":
		junk := strings.Repeat("x", 1000) + "\n"
		for i := 0; i < 20_000; i++ { // ~20 MB of lines
			os.Stdout.WriteString(junk)
		}
		os.Stdout.WriteString(strings.Repeat("y", MaxLineBytes+1<<20) + "\n") // one line 1 MiB over the limit
		os.Stdout.WriteString(`{"type":"result","last":true}` + "\n")
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
	return 2
}

// testBinary returns a copy of the test binary that any uid can execute: the
// host-unsafe sandbox runs the agent as an unprivileged user when wfb runs as
// root, and the go tool builds test binaries in 0700 directories.
func testBinary(t testing.TB) string {
	t.Helper()
	sharedBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wfb-proc-test-bin-")
		if err != nil {
			sharedBinErr = err
			return
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			sharedBinErr = err
			return
		}
		self, err := os.Executable()
		if err != nil {
			sharedBinErr = err
			return
		}
		data, err := os.ReadFile(self)
		if err != nil {
			sharedBinErr = err
			return
		}
		sharedBin = filepath.Join(dir, "wfb-agent.test")
		sharedBinErr = os.WriteFile(sharedBin, data, 0o755)
	})
	if sharedBinErr != nil {
		t.Fatalf("copy the test binary: %v", sharedBinErr)
	}
	return sharedBin
}
