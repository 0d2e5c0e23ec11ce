package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/wfbench/wfb/mock/provider"
)

// mockServeOptions are the validated flags of `wfb mock serve`.
type mockServeOptions struct {
	script string
	addr   string
}

// newMockServeCmd is `wfb mock serve`: the scripted provider as a process of
// its own, for agents run by hand or by another harness.
func newMockServeCmd(s *Streams) *cobra.Command {
	opts := &mockServeOptions{}
	cmd := &cobra.Command{
		Use:   "serve --script FILE [--addr 127.0.0.1:0]",
		Short: "Serve a scripted stand-in for the Anthropic, OpenAI (Responses, Chat Completions) and Gemini APIs on loopback",
		Long: `Serve a scripted stand-in for the Anthropic Messages API, the OpenAI
Responses and Chat Completions APIs and the Gemini API.

The first line of stdout is the base URL (e.g. http://127.0.0.1:41234): set
ANTHROPIC_BASE_URL or GOOGLE_GEMINI_BASE_URL to it (Codex, and an
OpenAI-compatible client: a base URL of it + "/v1"). The provider answers
POST /v1/messages, POST /v1/responses, POST .../chat/completions and
POST /v1beta/models/{model}:generateContent or :streamGenerateContent with
the script's replies in order, one sequence for all, then its default,
until interrupted (SIGINT or SIGTERM), and logs one line per request to
stderr. It listens on loopback only. The script format is documented on
provider.Script.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return badInput("mock serve takes no arguments, got %q", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.script == "" {
				return badInput("mock serve: --script FILE is required")
			}
			if err := provider.CheckLoopback(opts.addr); err != nil {
				return badInput("mock serve: --addr: %w", err)
			}
			return mockServeRun(cmd, s, opts)
		},
	}
	cmd.Flags().StringVar(&opts.script, "script", "", "the script file (YAML or JSON) of replies to serve")
	cmd.Flags().StringVar(&opts.addr, "addr", "127.0.0.1:0", "loopback host:port to listen on (port 0: any free port)")
	return cmd
}

func mockServeRun(cmd *cobra.Command, s *Streams, opts *mockServeOptions) error {
	script, err := provider.LoadScript(opts.script)
	if err != nil {
		return err // a *provider.ScriptError: exit 2 by exitRules
	}
	p := provider.New(script)
	p.Log = s.ErrOut
	p.DiscardRequests = true // nothing reads them; they would only grow
	err = p.Serve(cmd.Context(), opts.addr, func(url string) {
		fmt.Fprintln(s.Out, url)
		fmt.Fprintf(s.ErrOut, "mock provider serving %s at %s (%d replies, then the default); interrupt to stop\n",
			opts.script, url, len(script.Replies))
	})
	return err // provider.ErrNotLoopback is exit 2 by exitRules
}
