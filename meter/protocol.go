package meter

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
)

// Protocol names recorded in Record.Protocol.
const (
	ProtocolAnthropic = "anthropic-messages"
	ProtocolOpenAI    = "openai-responses"
	ProtocolGemini    = "gemini-generate-content"
	// ProtocolOpenAIChat is OpenAI's Chat Completions, which most
	// OpenAI-compatible servers speak.
	ProtocolOpenAIChat = "openai-chat-completions"
)

// protocol is one provider API the meter reads usage from. Adding one (a
// new agent's API) is a type with these methods and a line in detect.
type protocol interface {
	// name is one of the Protocol* constants.
	name() string
	// decoder returns the reader of one response to a model request
	// whose body (as far as it was read) is request.
	decoder(request []byte) decoder
	// errorBody is an error answer in the protocol's own shape, for a
	// failure of the proxy itself (kind is the meter's error type).
	errorBody(status int, kind, msg string) []byte
}

// decoder reads one response: a whole JSON body, or SSE events, one call
// each, in order; then result says what they amounted to.
type decoder interface {
	object(data []byte)
	// wants says whether events of this name (possibly "") are worth
	// decoding; the data of others is not even collected.
	wants(name string) bool
	event(name string, data []byte)
	result(status int, complete bool) outcome
}

// outcome is what a response said about the request.
type outcome struct {
	// billed says the response is a model answer whose usage counts: a 2xx
	// that reached the point where the protocol reports final usage.
	billed    bool
	usage     Usage
	model     string // the model the response names
	errorType string // the provider's error type, from an error body or event
	detail    string // the provider's error message, clipped
	// surcharges name what the response says was billed beyond its token
	// counts at standard rates (see anthropicSurcharges).
	surcharges []string
}

// detect returns the protocol of a model request to the upstream path, or
// nil for anything else (probes, count_tokens, model lists).
func detect(method, path string) protocol {
	if method != http.MethodPost {
		return nil
	}
	p := strings.TrimSuffix(path, "/")
	switch {
	case strings.HasSuffix(p, "/v1/messages"):
		return anthropic{}
	case strings.HasSuffix(p, "/responses"):
		return openAI{}
	case strings.HasSuffix(p, "/chat/completions"):
		return chatCompletions{}
	case strings.Contains(p, "/models/") && (strings.HasSuffix(p, ":generateContent") || strings.HasSuffix(p, ":streamGenerateContent")):
		return gemini{}
	}
	return nil
}

// guessShape picks the protocol whose error shape suits an answer to a
// request that is not (or not yet known to be) a model request: the one
// its path looks like, else Anthropic's.
func guessShape(path string) protocol {
	if p := detect(http.MethodPost, path); p != nil {
		return p
	}
	return anthropic{}
}

// maxJSONBody bounds how much of a JSON response is held to read its
// usage; a longer one is passed through but its usage is not read.
const maxJSONBody = 32 << 20

// maxSSEEvent bounds one SSE event (its data lines together).
const maxSSEEvent = 16 << 20

// bodyReader feeds a response body, as it passes, to a decoder: whole for
// JSON, event by event for SSE.
type bodyReader struct {
	dec      decoder
	sse      bool
	buf      bytes.Buffer // JSON body, or SSE's unfinished line
	event    string
	data     bytes.Buffer
	overflow string // why the body could not be read whole
}

func newBodyReader(dec decoder, sse bool) *bodyReader {
	return &bodyReader{dec: dec, sse: sse}
}

// write takes the next bytes of the body.
func (b *bodyReader) write(p []byte) {
	if b.overflow != "" {
		return
	}
	if !b.sse {
		if b.buf.Len()+len(p) > maxJSONBody {
			b.overflow = fmt.Sprintf("the response body exceeds %d bytes; its usage was not read", maxJSONBody)
			b.buf = bytes.Buffer{}
			return
		}
		b.buf.Write(p)
		return
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			b.buf.Write(p)
			if b.buf.Len() > maxSSEEvent {
				b.overflow = fmt.Sprintf("an SSE line exceeds %d bytes; the stream's usage was not read", maxSSEEvent)
			}
			return
		}
		line := p[:i]
		if b.buf.Len() > 0 {
			b.buf.Write(line)
			line = b.buf.Bytes()
		}
		b.line(bytes.TrimSuffix(line, []byte{'\r'}))
		b.buf.Reset()
		p = p[i+1:]
	}
}

// line handles one SSE line (without its end of line).
func (b *bodyReader) line(l []byte) {
	switch {
	case len(l) == 0:
		b.dispatch()
	case l[0] == ':':
		// a comment (keep-alive)
	case bytes.HasPrefix(l, []byte("event:")):
		b.event = string(bytes.TrimSpace(l[len("event:"):]))
	case bytes.HasPrefix(l, []byte("data:")):
		if !b.dec.wants(b.event) {
			return
		}
		d := l[len("data:"):]
		if len(d) > 0 && d[0] == ' ' {
			d = d[1:]
		}
		if b.data.Len() > 0 {
			b.data.WriteByte('\n')
		}
		if b.data.Len()+len(d) > maxSSEEvent {
			b.overflow = fmt.Sprintf("an SSE event exceeds %d bytes; the stream's usage was not read", maxSSEEvent)
			return
		}
		b.data.Write(d)
	}
}

func (b *bodyReader) dispatch() {
	if (b.data.Len() > 0 || b.event != "") && b.dec.wants(b.event) {
		b.dec.event(b.event, b.data.Bytes())
	}
	b.event = ""
	b.data.Reset()
}

// finish says what the response amounted to. complete is false when the
// body ended early (upstream cut, agent gone).
func (b *bodyReader) finish(status int, complete bool) outcome {
	if b.overflow == "" {
		if b.sse {
			if b.buf.Len() > 0 {
				b.line(bytes.TrimSuffix(b.buf.Bytes(), []byte{'\r'}))
			}
			b.dispatch()
		} else if b.buf.Len() > 0 {
			b.dec.object(b.buf.Bytes())
		}
	}
	o := b.dec.result(status, complete)
	if b.overflow != "" {
		// What was not read cannot say whether the answer was whole: a
		// complete 2xx counts, with its usage not measured.
		o.billed = is2xx(status) && complete
		for _, f := range o.usage.Fields() {
			if f.Count.State != NotReported {
				*f.Count = Count{Native: f.Name, Why: b.overflow}
			}
		}
	}
	return o
}

// is2xx says whether status is a success.
func is2xx(status int) bool { return status >= 200 && status <= 299 }
