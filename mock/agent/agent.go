package agent

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// Exit codes of the stand-in agent, Claude Code's where it has one.
const (
	exitOK              = 0
	exitFailed          = 1   // the session ran and failed (is_error, error subtypes)
	exitUsage           = 2   // bad flags or environment: nothing was attempted
	exitSIGTERM         = 143 // cancelled: no result is printed, as Claude Code
	defaultModel        = "stand-in"
	maxTokens           = 32000
	defaultSystemPrompt = "You are the wfb stand-in agent, a scripted offline agent for testing coding-agent benchmarks. Use the tools to do the task."
	// maxPromptBytes bounds the prompt read from stdin.
	maxPromptBytes = 64 << 20
)

// Main runs the stand-in agent: a small agent CLI with Claude Code's
// command-line interface and result shapes, used for offline tests and dry
// runs. args exclude the program name; getenv reads its environment. It
// returns the process exit code: 0 success, 1 a failed session (the result
// says why), 2 bad flags or environment, 143 when ctx is cancelled (SIGTERM),
// in which case, as with Claude Code, no result is printed.
//
// It talks to $ANTHROPIC_BASE_URL (required) with $ANTHROPIC_API_KEY, makes
// one model request by default (more with --max-turns), runs the tools the
// replies ask for (Write, Read, Bash) in the working directory, and reports
// usage exactly as served, summed over turns, with a cost from the price
// table in price.go.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	start := time.Now()
	opts, code := parseFlags(args, stdout, stderr)
	if opts == nil {
		return code
	}
	baseURL := getenv("ANTHROPIC_BASE_URL")
	if baseURL == "" {
		fmt.Fprintln(stderr, "wfb mock agent: ANTHROPIC_BASE_URL is not set: the stand-in agent talks only to the provider named there (start one with `wfb mock serve --script FILE`)")
		return exitUsage
	}
	if !strings.HasPrefix(baseURL, "http://") && !strings.HasPrefix(baseURL, "https://") {
		fmt.Fprintf(stderr, "wfb mock agent: ANTHROPIC_BASE_URL %q is not an http(s) URL\n", baseURL)
		return exitUsage
	}
	prompt := strings.Join(opts.positional, " ")
	if len(opts.positional) == 0 {
		b, err := io.ReadAll(io.LimitReader(stdin, maxPromptBytes+1))
		if err != nil {
			fmt.Fprintf(stderr, "wfb mock agent: read prompt from stdin: %v\n", err)
			return exitFailed
		}
		if len(b) > maxPromptBytes {
			fmt.Fprintf(stderr, "wfb mock agent: the prompt on stdin exceeds %d MiB; not read\n", maxPromptBytes>>20)
			return exitUsage
		}
		prompt = string(b)
	}
	if strings.TrimSpace(prompt) == "" {
		fmt.Fprintln(stderr, "Error: Input must be provided either through stdin or as a prompt argument when using --print")
		return exitFailed
	}
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "wfb mock agent: working directory: %v\n", err)
		return exitFailed
	}
	sessionID := opts.sessionID
	if sessionID == "" {
		sessionID = newUUID()
	}
	s := &session{
		opts:      opts,
		cwd:       cwd,
		prompt:    prompt,
		baseURL:   baseURL,
		apiKey:    getenv("ANTHROPIC_API_KEY"),
		sessionID: sessionID,
		out:       stdout,
		errOut:    stderr,
		usage:     newUsageSum(),
		client:    &http.Client{Timeout: apiTimeout(getenv)},
		start:     start,
		getenv:    getenv,
	}
	return s.run(ctx)
}

// apiTimeout bounds one model request: API_TIMEOUT_MS as Claude Code
// reads it, else Claude Code's default of ten minutes.
func apiTimeout(getenv func(string) string) time.Duration {
	if ms, err := strconv.Atoi(getenv("API_TIMEOUT_MS")); err == nil && ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return 10 * time.Minute
}

// statusOverloaded is the status of Anthropic's overloaded_error.
const statusOverloaded = 529

// retryDelay is how long the agent waits before re-sending a request the
// provider answered 529.
const retryDelay = 200 * time.Millisecond

// newUUID returns a random version-4 UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
