package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/wfbench/wfb/meter"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner/meterstore"
)

// mockRecordOptions are the flags of `wfb mock record`.
type mockRecordOptions struct {
	db     string
	out    string
	delays bool
}

// newMockRecordCmd is `wfb mock record`: a metered attempt's exchanges as
// a mock script, so that a real session re-runs offline.
func newMockRecordCmd(s *Streams) *cobra.Command {
	opts := &mockRecordOptions{}
	cmd := &cobra.Command{
		Use:   "record ATTEMPT --out FILE [--db FILE] [--delays]",
		Short: "Turn a metered attempt's recorded exchanges into a mock script that replays them",
		Long: `Turn the exchanges the metering proxy kept for ATTEMPT (an attempt_id: a
run's, or a 'wfb proxy' attempt's) into a mock script that 'wfb mock serve'
replays: one reply per model request (Anthropic Messages, OpenAI Responses
or Chat Completions, JSON or SSE), with its text, tool calls, stop reason,
usage verbatim and status, matched to the request it answers by model and
turn. --delays serves each reply after the time its first byte took on the
wire. The script is written to --out ("-": stdout); its header comments say
where each reply came from and what a script cannot carry (thinking blocks,
extra usage fields).`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return badInput("mock record takes one ATTEMPT (an attempt_id), got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.out == "" {
				return badInput("mock record: --out FILE is required (\"-\" for stdout)")
			}
			return mockRecordRun(cmd, s, args[0], opts)
		},
	}
	dbFlag(cmd, &opts.db)
	allowTamperedFlag(cmd, s)
	cmd.Flags().StringVar(&opts.out, "out", "", `the script file to write ("-": stdout)`)
	cmd.Flags().BoolVar(&opts.delays, "delays", false, "serve each reply after its recorded time to first byte")
	return cmd
}

func mockRecordRun(cmd *cobra.Command, s *Streams, attempt string, opts *mockRecordOptions) error {
	db, err := openResults(cmd.Context(), s, opts.db)
	if err != nil {
		return err
	}
	defer db.Close()
	exchanges, err := meterstore.Exchanges(cmd.Context(), db, attempt)
	if err != nil {
		return err
	}
	rec, err := provider.RecordScript(attempt, recorded(exchanges), provider.RecordOptions{Delays: opts.delays, Source: db.Path()})
	var bad *provider.RecordError
	if errors.As(err, &bad) {
		return asBadInput(err)
	}
	if err != nil {
		return err
	}
	header := append([]string{fmt.Sprintf("recorded by wfb mock record from attempt %s of %s; replay with wfb mock serve --script FILE", attempt, db.Path())}, rec.Notes...)
	data, err := rec.Script.Marshal(header)
	if err != nil {
		return err
	}
	if opts.out == "-" {
		_, err = s.Out.Write(data)
		return err
	}
	if err := writeFileAtomic(opts.out, data); err != nil {
		return fmt.Errorf("mock record: write %s: %w", opts.out, err)
	}
	fmt.Fprintf(s.ErrOut, "wfb mock record: %d replies from attempt %s written to %s\n", len(rec.Script.Replies), attempt, opts.out)
	return nil
}

// recorded are an attempt's exchanges as the mock provider records them,
// each model request named by the API the provider speaks.
func recorded(exchanges []meterstore.Exchange) []provider.Exchange {
	out := make([]provider.Exchange, len(exchanges))
	for i, x := range exchanges {
		out[i] = provider.Exchange{Seq: int(x.Seq), Method: x.Method, Protocol: x.Protocol, ContentType: x.ContentType,
			Request: x.RequestBody, Response: x.ResponseBody, Whole: x.Whole, Err: x.Err, TTFBMS: x.TTFBMS}
		switch x.Protocol {
		case meter.ProtocolAnthropic:
			out[i].API = provider.APIMessages
		case meter.ProtocolOpenAI:
			out[i].API = provider.APIResponses
		case meter.ProtocolOpenAIChat:
			out[i].API = provider.APIChatCompletions
		}
		if x.Status != nil {
			out[i].Status = int(*x.Status)
		}
	}
	return out
}

// writeFileAtomic writes data to path through a temporary file beside it:
// a reader never sees half a script.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
