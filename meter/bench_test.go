package meter

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// The benchmarks measure the proxy against the same upstream reached
// directly, side by side in one run, alternating request by request so
// that both see the same machine load:
//
//	go test -run '^$' -bench . -benchtime 2000x ./meter/
//
// BenchmarkAddedLatency reports the median time of a request direct and
// through the proxy, and their difference (target: at most 1 ms added).
// BenchmarkThroughput streams a large SSE response both ways and reports
// each rate and their ratio (target: the proxy at least 0.7 of direct).

func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}}
}

// timedPost sends body and reads the whole answer, returning how long it
// took.
func timedPost(b *testing.B, c *http.Client, url, body string) time.Duration {
	start := time.Now()
	resp, err := c.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || n == 0 {
		b.Fatalf("status %d, %d bytes, %v", resp.StatusCode, n, err)
	}
	return time.Since(start)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func BenchmarkAddedLatency(b *testing.B) {
	// A request body the size of a small agent turn.
	body := `{"model":"m","stream":%s,"messages":[{"role":"user","content":"` + strings.Repeat("x", 10<<10) + `"}]}`
	for _, mode := range []struct {
		name    string
		handler http.HandlerFunc
		stream  string
	}{
		{"json", messagesJSON(usageFull), "false"},
		{"sse", messagesSSE(startOf(usageFull), usageFull), "true"},
	} {
		b.Run(mode.name, func(b *testing.B) {
			up := newUpstream(b, mode.handler)
			p := startProxy(b, up.URL, Options{})
			c := benchClient()
			req := fmt.Sprintf(body, mode.stream)
			a := begin(b, p, "bench")
			var direct, proxied []time.Duration
			for i := 0; b.Loop(); i++ {
				if i%500 == 499 {
					// Keep the attempt's kept bodies bounded, as a session is.
					a.End(context.Background())
					a = begin(b, p, fmt.Sprint("bench-", i))
				}
				direct = append(direct, timedPost(b, c, up.URL+"/v1/messages", req))
				proxied = append(proxied, timedPost(b, c, a.BaseURL()+"/v1/messages", req))
			}
			a.End(context.Background())
			d, pr := median(direct), median(proxied)
			b.ReportMetric(float64(d.Microseconds()), "direct-µs/req")
			b.ReportMetric(float64(pr.Microseconds()), "proxy-µs/req")
			b.ReportMetric(float64((pr - d).Microseconds()), "added-µs/req")
		})
	}
}

func BenchmarkThroughput(b *testing.B) {
	const events = 2048
	event := "event: content_block_delta\ndata: " + `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + strings.Repeat("y", 4000) + `"}}` + "\n\n"
	big := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, "message_start", `{"type":"message_start","message":{"model":"m","usage":`+startOf(usageFull)+`}}`)
		for range events {
			io.WriteString(w, event)
		}
		sse(w, "message_delta", `{"type":"message_delta","usage":`+usageFull+`}`)
		sse(w, "message_stop", `{"type":"message_stop"}`)
	}
	benchThroughput(b, "/v1/messages", big, float64(events*len(event)))
}

// BenchmarkThroughputChat is BenchmarkThroughput for a Chat Completions
// stream, whose chunks carry no event name: each says "usage": null, as
// with stream_options.include_usage, and only the last one's usage is read.
func BenchmarkThroughputChat(b *testing.B) {
	const events = 2048
	event := `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"` +
		strings.Repeat("y", 4000) + `"},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n"
	big := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for range events {
			io.WriteString(w, event)
		}
		io.WriteString(w, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":`+chatUsage("10", "0", "5", "0")+"}\n\ndata: [DONE]\n\n")
	}
	benchThroughput(b, "/v1/chat/completions", big, float64(events*len(event)))
}

// benchThroughput streams big's answer to path directly and through the
// proxy, request by request, and reports each rate (size bytes a stream)
// and their ratio.
func benchThroughput(b *testing.B, path string, big http.HandlerFunc, size float64) {
	up := newUpstream(b, big)
	p := startProxy(b, up.URL, Options{})
	c := benchClient()
	var direct, proxied []time.Duration
	for i := 0; b.Loop(); i++ {
		a := begin(b, p, fmt.Sprint("bench-", i))
		direct = append(direct, timedPost(b, c, up.URL+path, `{"stream":true}`))
		proxied = append(proxied, timedPost(b, c, a.BaseURL()+path, `{"stream":true}`))
		a.End(context.Background())
	}
	d, pr := median(direct), median(proxied)
	b.ReportMetric(size/d.Seconds()/1e6, "direct-MB/s")
	b.ReportMetric(size/pr.Seconds()/1e6, "proxy-MB/s")
	b.ReportMetric(d.Seconds()/pr.Seconds(), "proxy/direct")
}
