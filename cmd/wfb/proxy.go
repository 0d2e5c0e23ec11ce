package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/meter"
	"github.com/wfbench/wfb/runner/meterstore"
	"github.com/wfbench/wfb/store"
)

// proxyOptions are the flags of `wfb proxy`.
type proxyOptions struct {
	upstream string
	db       string
	addr     string
	attempts int
}

// newProxyCmd is `wfb proxy`: the metering proxy on its own, for agents
// run by hand or by another harness.
func newProxyCmd(s *Streams) *cobra.Command {
	opts := &proxyOptions{}
	cmd := &cobra.Command{
		Use:   "proxy --upstream URL [--db FILE] [--attempts N] [--addr 127.0.0.1:0]",
		Short: "Meter a provider's wire: a loopback proxy that records every request into the results file",
		Long: `Meter a provider's wire on its own: a loopback proxy in front of --upstream
(the real API over https, or a 'wfb mock serve') that records every request,
its usage as the provider reported it, and its bodies into the results file's
requests and exchanges tables.

It meters --attempts attempts (default 1), each with a base URL of its own;
stdout has one line per attempt, "BASE_URL<TAB>ATTEMPT_ID". Give the base URL
to the agent (ANTHROPIC_BASE_URL for Claude Code; a Codex provider's base_url,
and an OpenAI-compatible client's (Chat Completions), is it plus /v1). The
attempt ids start with "proxy-": they never collide with a run's attempts
("att-..."), and have no results row. A request under no attempt's base URL
is answered 404 and recorded unattributed.

It runs until SIGINT, SIGTERM or SIGHUP, then waits up to 10 s for requests in
flight, writes what is left and exits 0. The API key the agent sends is
forwarded, never stored or printed; credential headers are not kept, and the
values of the key and token variables in wfb's environment are scrubbed from
every kept body. Read an attempt back with 'wfb sql' or turn it into a mock
script with 'wfb mock record'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.validate(); err != nil {
				return err
			}
			return proxyRun(cmd.Context(), s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.upstream, "upstream", "", "the provider base URL to forward to, http or https (required)")
	dbFlag(cmd, &opts.db)
	f.StringVar(&opts.addr, "addr", "127.0.0.1:0", "loopback host:port to listen on (port 0: any free port)")
	f.IntVar(&opts.attempts, "attempts", 1, "how many attempts (base URLs) to meter, 1-100")
	return cmd
}

func (o *proxyOptions) validate() error {
	if o.upstream == "" {
		return badInput("proxy: --upstream URL is required")
	}
	u, err := url.Parse(o.upstream)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return badInput("proxy: --upstream %q: want an http or https base URL", store.Redact(o.upstream))
	case u.User != nil:
		return badInput("proxy: --upstream must not carry credentials; the agent sends its key, and the proxy forwards it")
	case u.RawQuery != "" || u.Fragment != "":
		return badInput("proxy: --upstream %q: a base URL has no query or fragment", store.Redact(o.upstream))
	case o.attempts < 1 || o.attempts > 100:
		return badInput("proxy: --attempts %d: want 1 to 100", o.attempts)
	}
	return nil
}

func proxyRun(ctx context.Context, s *Streams, opts *proxyOptions) error {
	db, err := store.Open(ctx, dbPath(opts.db, s))
	if err != nil {
		return err
	}
	defer db.Close()
	rep, err := meterstore.Standalone(ctx, db, meterstore.StandaloneOptions{
		Addr: opts.addr, Upstream: opts.upstream, Attempts: opts.attempts, Secrets: envSecrets(s),
	}, func(live []meterstore.LiveAttempt) {
		for _, a := range live {
			fmt.Fprintf(s.Out, "%s\t%s\n", a.BaseURL, a.ID)
		}
		fmt.Fprintf(s.ErrOut, "wfb proxy: metering %d attempt(s) in front of %s into %s; interrupt to stop\n",
			len(live), store.Redact(opts.upstream), db.Path())
	})
	if errors.Is(err, meter.ErrNotLoopback) {
		return asBadInput(err)
	}
	for _, a := range rep.Attempts {
		fmt.Fprintf(s.ErrOut, "wfb proxy: %s: %d requests, %d billed; %s\n", a.ID, a.Requests, len(a.Summary.Billed), sumLine(a.Summary))
	}
	fmt.Fprintf(s.ErrOut, "wfb proxy: %d unattributed; %d rows written to %s\n", rep.Unattributed, rep.Written, db.Path())
	return err
}

// sumLine renders an attempt's metered usage, "-" for a figure not measured.
func sumLine(sum meter.Summary) string {
	var parts []string
	for _, f := range sum.Fields() {
		v := "-"
		if f.Sum.Value != nil {
			v = fmt.Sprint(*f.Sum.Value)
		}
		parts = append(parts, f.Name+" "+v)
	}
	return strings.Join(parts, ", ")
}

// envSecrets are the values of the environment's secret-named variables
// (wfb.IsSecretName, the rule a session's are picked by): scrubbed from
// whatever the proxy keeps, should an agent sharing this environment send
// one in a body or a path.
func envSecrets(s *Streams) []string {
	var out []string
	for _, kv := range s.Environ() {
		name, value, ok := strings.Cut(kv, "=")
		if ok && value != "" && wfb.IsSecretName(name) {
			out = append(out, value)
		}
	}
	return out
}
