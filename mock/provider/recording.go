package provider

import (
	"fmt"
	"net/http"
)

// The model APIs a reply can be recorded from, as Exchange.API names them.
const (
	APIMessages        = apiMessages  // Anthropic Messages
	APIResponses       = apiResponses // OpenAI Responses
	APIChatCompletions = apiChat      // OpenAI Chat Completions
)

// Exchange is one request a metered attempt made, as the results file
// kept it: what RecordScript turns into a reply.
type Exchange struct {
	Seq    int
	Method string
	// API is the model API the request spoke (APIMessages, APIResponses,
	// APIChatCompletions); "" for any other request (a HEAD probe,
	// count_tokens, another API).
	API string
	// Protocol is the request's protocol as the results file names it
	// (requests.protocol), for the notes.
	Protocol string
	// Status is what the agent was answered; 0 when it was answered
	// nothing (it went away).
	Status      int
	ContentType string // the response's
	// Request and Response are the bodies as the wire carried them, when
	// Whole says both were kept whole.
	Request, Response []byte
	Whole             bool
	// Err says why the exchange could not be read back from the file.
	Err error
	// TTFBMS is the time its first byte took, in milliseconds; nil when
	// none came.
	TTFBMS *int64
}

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
	// Source names where the exchanges were read (the results file), for
	// messages.
	Source string
}

// Recording is a script recorded from an attempt, with what the script
// file's header should say about it.
type Recording struct {
	Script *Script
	// Notes say where each reply came from and what of its exchange a
	// script cannot carry.
	Notes []string
}

// RecordScript turns the model requests attempt made through the metering
// proxy (its exchanges, in the order they were made) into a mock script
// that answers them the same way: one reply per Anthropic Messages, OpenAI
// Responses or Chat Completions request, each matched to its request's
// model and turn (see Match; RecordReply). Other requests (a HEAD probe, count_tokens)
// are left out; a request that was answered nothing (the agent went away)
// too.
func RecordScript(attempt string, exchanges []Exchange, o RecordOptions) (Recording, error) {
	var rec Recording
	if attempt == "" {
		return rec, &RecordError{"name the attempt to record (an attempt_id, e.g. proxy-... from wfb proxy)"}
	}
	if len(exchanges) == 0 {
		return rec, &RecordError{fmt.Sprintf("attempt %q has no metered requests in %s", attempt, o.Source)}
	}
	rec.Script = &Script{}
	skipped := 0
	for _, x := range exchanges {
		if x.Method != http.MethodPost || (x.API != APIMessages && x.API != APIResponses && x.API != APIChatCompletions) || x.Status == 0 {
			skipped++
			continue
		}
		reply, notes, err := recordExchange(attempt, x, o)
		if err != nil {
			return rec, err
		}
		rec.Script.Replies = append(rec.Script.Replies, reply)
		line := fmt.Sprintf("reply %d: request %d, %s, status %d", len(rec.Script.Replies), x.Seq, x.Protocol, x.Status)
		for _, n := range notes {
			line += "; " + n
		}
		rec.Notes = append(rec.Notes, line)
	}
	if len(rec.Script.Replies) == 0 {
		return rec, &RecordError{fmt.Sprintf("attempt %q made no answered model request (%d requests, none Messages, Responses or Chat Completions)", attempt, len(exchanges))}
	}
	if skipped > 0 {
		rec.Notes = append(rec.Notes, fmt.Sprintf("%d other requests (probes, unanswered or other APIs) have no reply", skipped))
	}
	return rec, nil
}

// recordExchange turns one recorded exchange into a reply.
func recordExchange(attempt string, x Exchange, o RecordOptions) (Reply, []string, error) {
	where := fmt.Sprintf("attempt %q request %d", attempt, x.Seq)
	if x.Err != nil {
		return Reply{}, nil, fmt.Errorf("%s: %w", where, x.Err)
	}
	if !x.Whole {
		return Reply{}, nil, &RecordError{where + ": its bodies were not kept whole (the attempt's exchange budget ran out), so it cannot be replayed"}
	}
	in := Recorded{
		Responses: x.API == APIResponses, ChatCompletions: x.API == APIChatCompletions, Status: x.Status, ContentType: x.ContentType,
		Request: x.Request, Response: x.Response,
	}
	if o.Delays && x.TTFBMS != nil {
		in.DelayMS = int(*x.TTFBMS)
	}
	reply, notes, err := RecordReply(in)
	if err != nil {
		return reply, nil, &RecordError{where + ": " + err.Error()}
	}
	return reply, notes, nil
}
