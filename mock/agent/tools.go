package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Bounds on what a tool hands back to the model and the result stream.
const (
	readLimit      = 256 << 10
	bashOutLimit   = 30000
	bashTimeout    = 60 * time.Second
	bashMaxTimeout = 10 * time.Minute
)

// toolNames are the tools the stand-in offers, in the order it offers
// them, and builtinNames those --tools may name: Skill too, which is offered
// only when there are skills.
var (
	toolNames    = []string{"Write", "Read", "Bash"}
	builtinNames = append(slices.Clone(toolNames), "Skill")
)

// toolDefs are the tool definitions sent to the provider, shaped like
// Claude Code's.
var toolDefs = map[string]any{
	"Write": map[string]any{
		"name":        "Write",
		"description": "Writes a file to the local filesystem, atomically (a temporary file beside the target, then a rename).",
		"input_schema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"file_path": map[string]any{"type": "string", "description": "The absolute path to the file to write"},
				"content":   map[string]any{"type": "string", "description": "The content to write to the file"},
			},
			"required":             []string{"file_path", "content"},
			"additionalProperties": false,
		},
	},
	"Read": map[string]any{
		"name":        "Read",
		"description": "Reads a file from the local filesystem.",
		"input_schema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"file_path": map[string]any{"type": "string", "description": "The absolute path to the file to read"},
			},
			"required":             []string{"file_path"},
			"additionalProperties": false,
		},
	},
	"Bash": map[string]any{
		"name":        "Bash",
		"description": "Executes a shell command in the working directory and returns its output and exit code.",
		"input_schema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"command": map[string]any{"type": "string", "description": "The command to execute"},
				"timeout": map[string]any{"type": "number", "description": "Optional timeout in milliseconds (max 600000)"},
			},
			"required":             []string{"command"},
			"additionalProperties": false,
		},
	},
}

// toolResult is what one tool run reports back.
type toolResult struct {
	Content string
	IsError bool
}

func toolError(format string, args ...any) toolResult {
	return toolResult{Content: fmt.Sprintf(format, args...), IsError: true}
}

// execTool runs one tool the model asked for, in dir. Every failure is a
// tool error for the model to see, never a failure of the session.
func execTool(ctx context.Context, dir, name string, input json.RawMessage) toolResult {
	switch name {
	case "Write":
		var in struct {
			FilePath *string `json:"file_path"`
			Content  *string `json:"content"`
		}
		if err := json.Unmarshal(input, &in); err != nil {
			return toolError("InputValidationError: Write: %v", err)
		}
		if in.FilePath == nil || *in.FilePath == "" || in.Content == nil {
			return toolError("InputValidationError: Write requires file_path and content")
		}
		return writeTool(resolve(dir, *in.FilePath), *in.Content)
	case "Read":
		var in struct {
			FilePath string `json:"file_path"`
		}
		if err := json.Unmarshal(input, &in); err != nil {
			return toolError("InputValidationError: Read: %v", err)
		}
		if in.FilePath == "" {
			return toolError("InputValidationError: Read requires file_path")
		}
		return readTool(resolve(dir, in.FilePath))
	case "Bash":
		var in struct {
			Command string   `json:"command"`
			Timeout *float64 `json:"timeout"`
		}
		if err := json.Unmarshal(input, &in); err != nil {
			return toolError("InputValidationError: Bash: %v", err)
		}
		if in.Command == "" {
			return toolError("InputValidationError: Bash requires command")
		}
		timeout := bashTimeout
		if in.Timeout != nil && *in.Timeout > 0 {
			timeout = min(time.Duration(*in.Timeout)*time.Millisecond, bashMaxTimeout)
		}
		return bashTool(ctx, dir, in.Command, timeout)
	default:
		return toolError("Error: No such tool available: %s", name)
	}
}

// resolve makes path absolute against dir.
func resolve(dir, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(dir, path)
}

// writeTool writes content to path exactly the way Claude Code's Write tool
// does: a temporary file <path>.tmp.<pid>.<hex> beside the target, written,
// fsynced, then renamed over it. That is why a writable parent DIRECTORY is
// needed, not a writable file — the contract a review artifact depends on.
// Any failure removes the temporary file.
func writeTool(path, content string) toolResult {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return toolError("Error writing %s: %v", path, err)
	}
	mode := os.FileMode(0o644)
	existed := false
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return toolError("Error writing %s: is a directory", path)
		}
		mode, existed = fi.Mode().Perm(), true
	}
	var suffix [6]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return toolError("Error writing %s: %v", path, err)
	}
	tmp := fmt.Sprintf("%s.tmp.%d.%s", path, os.Getpid(), hex.EncodeToString(suffix[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return toolError("Error writing %s: %v", path, err)
	}
	err = func() error {
		if _, err := io.WriteString(f, content); err != nil {
			f.Close()
			return err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		return os.Rename(tmp, path)
	}()
	if err != nil {
		os.Remove(tmp)
		return toolError("Error writing %s: %v", path, err)
	}
	if existed {
		return toolResult{Content: fmt.Sprintf("The file %s has been updated.", path)}
	}
	return toolResult{Content: fmt.Sprintf("File created successfully at: %s", path)}
}

// readTool returns the file's content, cut at readLimit bytes.
func readTool(path string) toolResult {
	f, err := os.Open(path)
	if err != nil {
		return toolError("Error reading %s: %v", path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return toolError("Error reading %s: is a directory", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, readLimit+1))
	if err != nil {
		return toolError("Error reading %s: %v", path, err)
	}
	if len(b) > readLimit {
		return toolResult{Content: string(b[:readLimit]) + fmt.Sprintf("\n[truncated: file is longer than %d bytes]", readLimit)}
	}
	return toolResult{Content: string(b)}
}

// bashTool runs command with /bin/sh in dir, in its own process group so
// that a timeout kills whatever the command started too.
func bashTool(ctx context.Context, dir, command string, timeout time.Duration) toolResult {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Dir = dir
	cmd.Stdin = nil
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	out := &boundedBuffer{limit: bashOutLimit}
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	text := out.String()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return toolResult{Content: text}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return toolError("Command timed out after %s\n%s", timeout, text)
	case errors.As(err, &exitErr) && exitErr.ExitCode() >= 0:
		return toolError("Exit code %d\n%s", exitErr.ExitCode(), text)
	default:
		return toolError("Error running command: %v\n%s", err, text)
	}
}

// boundedBuffer keeps the first limit bytes written to it and counts
// the rest, so a chatty command cannot fill the agent's memory.
type boundedBuffer struct {
	buf     bytes.Buffer
	limit   int
	dropped int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	room := b.limit - b.buf.Len()
	if room >= len(p) {
		b.buf.Write(p)
	} else {
		b.buf.Write(p[:max(room, 0)])
		b.dropped += len(p) - max(room, 0)
	}
	return len(p), nil
}

func (b *boundedBuffer) String() string {
	s := b.buf.String()
	if b.dropped > 0 {
		s += fmt.Sprintf("\n[output truncated: %d more bytes]", b.dropped)
	}
	return strings.TrimRight(s, "\n")
}
