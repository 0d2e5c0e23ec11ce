package runner

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
)

// Agents of the helper process (see helperProcess) that stand in for a
// real CLI's behaviour the stand-in agent does not have: one that prints
// usage without asking any provider, and Codex and Gemini CLI meeting a
// provider's malformed usage the way each does.

// unwitnessedResult is a Claude Code result whose usage (2000/300/7000/1000,
// $0.0123) no provider was asked for.
const unwitnessedResult = `{"type":"result","subtype":"success","is_error":false,"num_turns":1,"session_id":"s1","result":"done","total_cost_usd":0.0123,` +
	`"usage":{"input_tokens":2000,"output_tokens":300,"cache_read_input_tokens":7000,"cache_creation_input_tokens":1000}}`

// agentHelper runs the helper agent named by mode, if it is one.
func agentHelper(mode string) (int, bool) {
	if slices.Contains(os.Args[1:], "--version") {
		fmt.Println("1.0.0")
		return 0, true
	}
	switch mode {
	case "usage-without-request":
		// Prints usage and asks no provider: the meter sees nothing.
		io.Copy(io.Discard, os.Stdin)
		fmt.Println(unwitnessedResult)
		return 0, true
	case "codex-chokes-on-usage":
		// Codex drops a response.completed event it cannot parse and
		// fails the turn as a disconnected stream.
		if err := post(os.Getenv("ANTHROPIC_BASE_URL")+"/v1/responses", `{"model":"gpt-5-codex","input":"hi","stream":true}`); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3, true
		}
		fmt.Println(`{"type":"thread.started","thread_id":"th-1"}`)
		fmt.Println(`{"type":"turn.started"}`)
		fmt.Println(`{"type":"turn.failed","error":{"message":"stream disconnected before completion: stream closed before response.completed"}}`)
		return 1, true
	case "gemini-passes-usage-on":
		// Gemini CLI passes the provider's counts on as they came.
		base := os.Getenv("GOOGLE_GEMINI_BASE_URL")
		if base == "" {
			base = os.Getenv("ANTHROPIC_BASE_URL")
		}
		if err := post(base+"/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3, true
		}
		fmt.Print(geminiPreamble)
		fmt.Println(`{"type":"result","status":"success","stats":{"total_tokens":1225,"input_tokens":1195,"output_tokens":30,"cached":-5,"input":1200,"duration_ms":1,"tool_calls":0,` +
			`"models":{"gemini-2.5-pro":{"total_tokens":1225,"input_tokens":1195,"output_tokens":30,"cached":-5,"input":1200}}}}`)
		return 0, true
	}
	return 0, false
}

// geminiPreamble is what Gemini CLI 0.61.0 prints before its result.
const geminiPreamble = `{"type":"init","timestamp":"2026-12-01T19:01:03.932Z","session_id":"4e4b874f","model":"gemini-2.5-pro"}
{"type":"message","timestamp":"2026-12-01T19:01:03.934Z","role":"user","content":"write the file"}
{"type":"message","timestamp":"2026-12-01T19:01:04.253Z","role":"assistant","content":"done","delta":true}
`

// post sends body to url and reads the whole answer.
func post(url, body string) error {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}
