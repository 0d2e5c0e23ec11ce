package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"
)

// Exit codes of the stand-in MCP server.
const (
	exitOK          = 0
	exitFailed      = 1 // the server failed while serving
	exitUsage       = 2 // bad flags: nothing was served
	exitInterrupted = 130
)

// version is the version the server states in its initialize result.
const version = "0.1.0"

// Main runs the stand-in MCP server on stdin and stdout until the client
// closes stdin, or on --http ADDR until ctx is cancelled. args exclude the
// program name. It returns the exit code: 0 when the client ended the
// session, 1 when serving failed, 2 for bad flags, 130 when ctx was cancelled
// under --http.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := pflag.NewFlagSet("wfb mock mcp-server", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	logPath := fs.String("log", "", "append one JSON line per tools/call (tool, arguments, pid) to this file")
	httpAddr := fs.String("http", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:8931) instead of stdio")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: wfb mock mcp-server [--log FILE] [--http ADDR]\n\nA stand-in MCP server with the tools find_symbol and echo.\n\nFlags:\n%s", fs.FlagUsages())
			return exitOK
		}
		fmt.Fprintf(stderr, "wfb mock mcp-server: %v\n", err)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "wfb mock mcp-server: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "wfb mock mcp-server: working directory: %v\n", err)
		return exitFailed
	}
	w := &witness{path: *logPath}
	server := newServer(dir, w)
	if *httpAddr != "" {
		return serveHTTP(ctx, server, *httpAddr, stdout, stderr)
	}
	t := &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}}
	if err := server.Run(ctx, t); err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "wfb mock mcp-server: %v\n", err)
		return exitFailed
	}
	if ctx.Err() != nil {
		return exitInterrupted
	}
	return exitOK
}

// serveHTTP serves the streamable HTTP transport on addr until ctx is
// cancelled, saying on stdout where it listens.
func serveHTTP(ctx context.Context, server *mcp.Server, addr string, stdout, stderr io.Writer) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "wfb mock mcp-server: %v\n", err)
		return exitUsage
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "wfb mock mcp-server: listening on http://%s/\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		fmt.Fprintf(stderr, "wfb mock mcp-server: %v\n", err)
		return exitFailed
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(shutdown)
		return exitInterrupted
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// findSymbolIn and echoIn are the tools' inputs; their schemas are inferred
// from these types.
type findSymbolIn struct {
	Name string `json:"name" jsonschema:"the function, class or type name to find, e.g. sum"`
}

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo back"`
}

// newServer builds the server and its tools, working in dir.
func newServer(dir string, w *witness) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "wfb-stand-in", Version: version}, nil)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "find_symbol",
		Description: "Finds where a function, class, def or func named NAME is defined in the text files of the workspace; answers file:line: text, one per definition.",
	}, func(ctx context.Context, req *mcp.CallToolRequest, in findSymbolIn) (*mcp.CallToolResult, any, error) {
		w.record("find_symbol", req.Params.Arguments)
		text, err := findSymbol(ctx, dir, in.Name)
		if err != nil {
			return nil, nil, err
		}
		return textResult(text), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "echo",
		Description: "Answers Echo: followed by TEXT.",
	}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		w.record("echo", req.Params.Arguments)
		return textResult("Echo: " + in.Text), nil, nil
	})
	return s
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// witness appends one JSON line per tool call to path ("" records nothing).
type witness struct {
	path string
	mu   sync.Mutex
}

// record appends the call; a failure to record is not the call's failure.
func (w *witness) record(tool string, args json.RawMessage) {
	if w.path == "" {
		return
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	line, err := json.Marshal(struct {
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
		PID       int             `json:"pid"`
	}{tool, args, os.Getpid()})
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(append(line, '\n'))
}
