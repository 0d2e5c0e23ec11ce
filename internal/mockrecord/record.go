// Package mockrecord turns what the metering proxy recorded of an attempt
// into a mock script that replays it (wfb mock record).
package mockrecord

import (
	"context"
	"fmt"
	"net/http"

	"github.com/wfbench/wfb/internal/meterstore"
	"github.com/wfbench/wfb/meter"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/store"
)

// RecordError says an attempt's recording cannot become a script: nothing
// was recorded for it, or a body was not kept whole. It is the user's to
// fix (another attempt, a larger budget).
type RecordError struct{ Msg string }

func (e *RecordError) Error() string { return e.Msg }

// RecordOptions configure RecordScript.
type RecordOptions struct {
	// Delays serves each reply after the time its first byte took on the
	// recorded wire (delay_ms); without, replies come at once.
	Delays bool
}

// Recording is a script recorded from an attempt, with what the script
// file's header should say about it.
type Recording struct {
	Script *provider.Script
	// Notes say where each reply came from and what of its exchange a
	// script cannot carry.
	Notes []string
}

// RecordScript turns the model requests an attempt made through the
// metering proxy into a mock script that answers them the same way: one
// reply per Anthropic Messages, OpenAI Responses or Chat Completions
// request, in the order they were made, each matched to its request's
// model and turn (see provider.Match). Other requests (a HEAD probe, count_tokens) are left
// out; a request that was answered nothing (the agent went away) too.
func RecordScript(ctx context.Context, db *store.DB, attemptID string, o RecordOptions) (Recording, error) {
	var rec Recording
	if attemptID == "" {
		return rec, &RecordError{"name the attempt to record (an attempt_id, e.g. proxy-... from wfb proxy)"}
	}
	reqs, err := db.Requests(ctx, attemptID)
	if err != nil {
		return rec, err
	}
	if len(reqs) == 0 {
		return rec, &RecordError{fmt.Sprintf("attempt %q has no metered requests in %s", attemptID, db.Path())}
	}
	rec.Script = &provider.Script{}
	skipped := 0
	for _, r := range reqs {
		if r.Method != http.MethodPost || (r.Protocol != meter.ProtocolAnthropic && r.Protocol != meter.ProtocolOpenAI && r.Protocol != meter.ProtocolOpenAIChat) || r.Status == nil {
			skipped++
			continue
		}
		reply, notes, err := recordReply(ctx, db, r, o)
		if err != nil {
			return rec, err
		}
		rec.Script.Replies = append(rec.Script.Replies, reply)
		line := fmt.Sprintf("reply %d: request %d, %s, status %d", len(rec.Script.Replies), r.Seq, r.Protocol, *r.Status)
		for _, n := range notes {
			line += "; " + n
		}
		rec.Notes = append(rec.Notes, line)
	}
	if len(rec.Script.Replies) == 0 {
		return rec, &RecordError{fmt.Sprintf("attempt %q made no answered model request (%d requests, none Messages, Responses or Chat Completions)", attemptID, len(reqs))}
	}
	if skipped > 0 {
		rec.Notes = append(rec.Notes, fmt.Sprintf("%d other requests (probes, unanswered or other APIs) have no reply", skipped))
	}
	return rec, nil
}

// recordReply turns one metered request and its kept exchange into a reply.
func recordReply(ctx context.Context, db *store.DB, r store.MeteredRequest, o RecordOptions) (provider.Reply, []string, error) {
	where := fmt.Sprintf("attempt %q request %d", r.AttemptID, r.Seq)
	x, err := db.Exchange(ctx, r.RequestID)
	if err != nil {
		return provider.Reply{}, nil, fmt.Errorf("%s: %w", where, err)
	}
	if x.RequestTruncated || x.ResponseTruncated || x.Codec == "" {
		return provider.Reply{}, nil, &RecordError{where + ": its bodies were not kept whole (the attempt's exchange budget ran out), so it cannot be replayed"}
	}
	reqBody, err := meterstore.Body(x.Codec, x.RequestBody, x.RequestSize, x.RequestSHA256)
	if err != nil {
		return provider.Reply{}, nil, fmt.Errorf("%s: request body: %w", where, err)
	}
	respBody, err := meterstore.Body(x.Codec, x.ResponseBody, x.ResponseSize, x.ResponseSHA256)
	if err != nil {
		return provider.Reply{}, nil, fmt.Errorf("%s: response body: %w", where, err)
	}
	in := provider.Recorded{
		Responses: r.Protocol == meter.ProtocolOpenAI, ChatCompletions: r.Protocol == meter.ProtocolOpenAIChat, Status: int(*r.Status),
		ContentType: http.Header(x.ResponseHeaders).Get("Content-Type"),
		Request:     reqBody, Response: respBody,
	}
	if o.Delays && r.TTFBMS != nil {
		in.DelayMS = int(*r.TTFBMS)
	}
	reply, notes, err := provider.RecordReply(in)
	if err != nil {
		return reply, nil, &RecordError{where + ": " + err.Error()}
	}
	return reply, notes, nil
}
