package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds on what an MCP server, which may be hostile, can make the agent
// hold or wait for.
const (
	mcpMaxConfigBytes   = 1 << 20
	mcpMaxTools         = 256       // tools taken from one server
	mcpMaxDescription   = 2048      // a longer tool description is cut, as Claude Code cuts it
	mcpMaxSchemaBytes   = 64 << 10  // a tool with a larger input schema is left out
	mcpOutLimit         = 100 << 10 // a tool result is cut here
	mcpConnectTimeout   = 30 * time.Second
	mcpCallTimeout      = 60 * time.Second
	mcpTerminateTimeout = 2 * time.Second // after stdin closes, before SIGTERM
	mcpStderrKept       = 4 << 10         // of a server's stderr, quoted when it fails
)

// mcpServerSpec is one entry of an --mcp-config's mcpServers, as Claude
// Code reads it.
type mcpServerSpec struct {
	Name    string            `json:"-"`
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// parseMCPConfigs reads the --mcp-config values, each a JSON object or the
// path of a file holding one, into the servers they name, sorted by name; a
// later config's server replaces an earlier one of the same name.
func parseMCPConfigs(values []string) ([]mcpServerSpec, error) {
	byName := map[string]mcpServerSpec{}
	for _, v := range values {
		raw := []byte(v)
		if t := strings.TrimSpace(v); !strings.HasPrefix(t, "{") {
			b, err := readBounded(t, mcpMaxConfigBytes)
			if err != nil {
				return nil, fmt.Errorf("--mcp-config %s: %w", t, err)
			}
			raw = b
		}
		var cfg struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		}
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return nil, fmt.Errorf("--mcp-config %s: %w", clip(v, 80), err)
		}
		if cfg.MCPServers == nil {
			return nil, fmt.Errorf("--mcp-config %s: no mcpServers object", clip(v, 80))
		}
		for name, entry := range cfg.MCPServers {
			var spec mcpServerSpec
			if err := json.Unmarshal(entry, &spec); err != nil {
				return nil, fmt.Errorf("--mcp-config: server %q: %w", name, err)
			}
			spec.Name = name
			if err := spec.check(); err != nil {
				return nil, fmt.Errorf("--mcp-config: server %q: %w", name, err)
			}
			byName[name] = spec
		}
	}
	var specs []mcpServerSpec
	for _, spec := range byName {
		specs = append(specs, spec)
	}
	slices.SortFunc(specs, func(a, b mcpServerSpec) int { return strings.Compare(a.Name, b.Name) })
	return specs, nil
}

func (s *mcpServerSpec) check() error {
	if s.Name == "" {
		return errors.New("empty server name")
	}
	switch s.Type {
	case "", "stdio":
		s.Type = "stdio"
		if s.Command == "" {
			return errors.New("a stdio server needs a command")
		}
	case "http", "sse":
		if s.URL == "" {
			return fmt.Errorf("an %s server needs a url", s.Type)
		}
	default:
		return fmt.Errorf("type %q: the stand-in speaks stdio, http and sse", s.Type)
	}
	return nil
}

func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return b, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// envRef is ${VAR} or ${VAR:-default}, as Claude Code expands them in an
// MCP config.
var envRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`) })

// expandEnv replaces each ${VAR} in s by VAR's value, else its default,
// and names the variables that had neither.
func expandEnv(s string, getenv func(string) string, missing *[]string) string {
	return envRef().ReplaceAllStringFunc(s, func(ref string) string {
		m := envRef().FindStringSubmatch(ref)
		if v := getenv(m[1]); v != "" {
			return v
		}
		if m[2] != "" {
			return m[3]
		}
		*missing = append(*missing, m[1])
		return ""
	})
}

// mcpTool is one tool of a connected server, as offered to the model.
type mcpTool struct {
	server *mcpServer
	name   string // the server's name for it
	def    map[string]any
}

// mcpServer is one configured server and, once connected, its session.
type mcpServer struct {
	name    string
	status  string // "connected" or "failed"
	session *mcp.ClientSession
	cmd     *exec.Cmd // a stdio server's process
	stderr  *boundedBuffer
	tools   []*mcpTool
}

// mcpServerStatus is one entry of the init event's mcp_servers.
type mcpServerStatus struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// mcpToolName is Claude Code's name for a server's tool: mcp__SERVER__TOOL,
// each part with what the API does not allow in a tool name replaced by _.
func mcpToolName(server, tool string) string {
	return "mcp__" + normalizeMCPName(server) + "__" + normalizeMCPName(tool)
}

var notInToolName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_-]`) })

func normalizeMCPName(s string) string { return notInToolName().ReplaceAllString(s, "_") }

// connectMCP connects to every server at once, each within the connect
// timeout. A server that cannot be started, initialized or listed is
// "failed", said on stderr, and the session goes on without it.
func connectMCP(ctx context.Context, specs []mcpServerSpec, dir string, getenv func(string) string, stderr io.Writer) []*mcpServer {
	servers := make([]*mcpServer, len(specs))
	errs := make([]error, len(specs))
	timeout := envDuration(getenv, "MCP_TIMEOUT", mcpConnectTimeout)
	var wg sync.WaitGroup
	for i, spec := range specs {
		servers[i] = &mcpServer{name: spec.Name, status: "failed"}
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			errs[i] = servers[i].connect(cctx, spec, dir, getenv)
		})
	}
	wg.Wait()
	for i, srv := range servers {
		if errs[i] == nil {
			srv.status = "connected"
			continue
		}
		srv.close()
		msg := fmt.Sprintf("wfb mock agent: MCP server %q failed: %v", srv.name, errs[i])
		if srv.stderr != nil && srv.stderr.buf.Len() > 0 {
			msg += "; its stderr: " + srv.stderr.String()
		}
		fmt.Fprintln(stderr, msg)
	}
	return servers
}

// envDuration reads a timeout in milliseconds from the environment, as
// Claude Code reads MCP_TIMEOUT and MCP_TOOL_TIMEOUT.
func envDuration(getenv func(string) string, key string, def time.Duration) time.Duration {
	if ms, err := strconv.Atoi(getenv(key)); err == nil && ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return def
}

// connect starts (stdio) or reaches (http, sse) the server, initializes
// the session and lists its tools.
func (srv *mcpServer) connect(ctx context.Context, spec mcpServerSpec, dir string, getenv func(string) string) error {
	var missing []string
	expand := func(s string) string { return expandEnv(s, getenv, &missing) }
	var transport mcp.Transport
	switch spec.Type {
	case "stdio":
		args := make([]string, len(spec.Args))
		for i, a := range spec.Args {
			args[i] = expand(a)
		}
		cmd := exec.Command(expand(spec.Command), args...)
		cmd.Dir = dir
		// The agent's environment plus the config's, as Claude Code gives it.
		cmd.Env = os.Environ()
		for k, v := range spec.Env {
			cmd.Env = append(cmd.Env, k+"="+expand(v))
		}
		srv.stderr = &boundedBuffer{limit: mcpStderrKept}
		cmd.Stderr = &lockedWriter{w: srv.stderr}
		// Its own process group, so that closing the session can kill what
		// the server started too.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.WaitDelay = mcpTerminateTimeout
		srv.cmd = cmd
		transport = &mcp.CommandTransport{Command: cmd, TerminateDuration: mcpTerminateTimeout}
	case "http", "sse":
		headers := http.Header{}
		for k, v := range spec.Headers {
			headers.Set(k, expand(v))
		}
		client := &http.Client{Transport: headerTransport{headers}}
		if spec.Type == "sse" {
			transport = &mcp.SSEClientTransport{Endpoint: expand(spec.URL), HTTPClient: client}
		} else {
			transport = &mcp.StreamableClientTransport{Endpoint: expand(spec.URL), HTTPClient: client, MaxRetries: -1, DisableStandaloneSSE: true}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing environment variables: %s", strings.Join(missing, ", "))
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "wfb-stand-in-agent", Version: "0.1.0"}, nil)
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	srv.session = session
	if session.InitializeResult() == nil || session.InitializeResult().Capabilities == nil || session.InitializeResult().Capabilities.Tools == nil {
		return nil // a server without tools is connected and offers none
	}
	for tool, err := range session.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("list tools: %w", err)
		}
		if len(srv.tools) == mcpMaxTools {
			break
		}
		if t := srv.offer(tool); t != nil {
			srv.tools = append(srv.tools, t)
		}
	}
	return nil
}

// offer shapes a server's tool as a tool definition for the model, or
// returns nil for one the agent leaves out (a schema too large).
func (srv *mcpServer) offer(tool *mcp.Tool) *mcpTool {
	schema, err := json.Marshal(tool.InputSchema)
	if err != nil || len(schema) > mcpMaxSchemaBytes || tool.Name == "" {
		return nil
	}
	var inputSchema any = json.RawMessage(schema)
	if tool.InputSchema == nil {
		inputSchema = map[string]any{"type": "object"}
	}
	desc := tool.Description
	if len(desc) > mcpMaxDescription {
		desc = desc[:mcpMaxDescription] + "… [truncated]"
	}
	name := mcpToolName(srv.name, tool.Name)
	return &mcpTool{server: srv, name: tool.Name, def: map[string]any{
		"name":         name,
		"description":  desc,
		"input_schema": inputSchema,
	}}
}

// call runs the tool with input, within the call timeout. An error result
// or a failed call is a tool error, never the session's failure.
func (t *mcpTool) call(ctx context.Context, input json.RawMessage, timeout time.Duration) toolResult {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var args map[string]any
	if len(input) > 0 {
		if err := json.Unmarshal(input, &args); err != nil {
			return toolError("InputValidationError: %v", err)
		}
	}
	res, err := t.server.session.CallTool(ctx, &mcp.CallToolParams{Name: t.name, Arguments: args})
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return toolError("MCP tool %s timed out after %s", t.name, timeout)
	case err != nil:
		return toolError("Error calling MCP tool %s: %v", t.name, err)
	}
	out := &boundedBuffer{limit: mcpOutLimit}
	for i, c := range res.Content {
		if i > 0 {
			io.WriteString(out, "\n")
		}
		switch c := c.(type) {
		case *mcp.TextContent:
			io.WriteString(out, c.Text)
		default:
			fmt.Fprintf(out, "[%T content not shown]", c)
		}
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		out.Write(b)
	}
	return toolResult{Content: out.String(), IsError: res.IsError}
}

// close ends the session and, for a stdio server, makes sure no process of
// its group is left: the SDK closes stdin, waits, then SIGTERM and SIGKILL;
// whatever the server started in its group is killed after.
func (srv *mcpServer) close() {
	if srv.session != nil {
		_ = srv.session.Close()
	}
	if srv.cmd != nil && srv.cmd.Process != nil {
		_ = syscall.Kill(-srv.cmd.Process.Pid, syscall.SIGKILL)
		if srv.session == nil {
			// Connect failed after the start: nobody has waited for it.
			_ = srv.cmd.Wait()
		}
	}
}

// headerTransport adds an MCP config's headers to every request.
type headerTransport struct{ headers http.Header }

func (h headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, vs := range h.headers {
		req.Header[k] = vs
	}
	return http.DefaultTransport.RoundTrip(req)
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
