package meter

import (
	"reflect"
	"testing"
)

// FuzzSSE feeds the meter's SSE (and JSON body) reader what a provider or
// a proxy could send. It must never panic; what it reads must not depend on
// how the body was split into writes (the network decides that); and a
// figure it calls present is a count.
func FuzzSSE(f *testing.F) {
	f.Add([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n"+
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":9}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"), uint16(7), uint8(0), true)
	f.Add([]byte("event: response.completed\r\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":4,\"input_tokens_details\":{\"cached_tokens\":1},\"output_tokens\":2}}}\r\n\r\n"), uint16(3), uint8(1), true)
	f.Add([]byte(`{"usage":{"input_tokens":-1,"output_tokens":true}}`), uint16(1), uint8(0), false)
	f.Add([]byte("data: {\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"o\"},\"finish_reason\":null}],\"usage\":null}\n\n"+
		"data: {\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2,\"prompt_tokens_details\":{\"cached_tokens\":4}}}\n\ndata: [DONE]\n\n"), uint16(5), uint8(3), true)
	f.Add([]byte(`{"object":"chat.completion","model":"m","choices":[],"usage":{"prompt_tokens":"9","completion_tokens":-2,"completion_tokens_details":{"reasoning_tokens":3}}}`), uint16(2), uint8(3), false)
	f.Add([]byte("data: {\"error\":{\"message\":\"overloaded\",\"type\":null,\"code\":503}}\n\n"), uint16(9), uint8(3), true)
	protocols := []protocol{anthropic{}, openAI{}, gemini{}, chatCompletions{}}
	f.Fuzz(func(t *testing.T, body []byte, split uint16, proto uint8, sse bool) {
		p := protocols[int(proto)%len(protocols)]
		whole := newBodyReader(p.decoder(nil), sse)
		whole.write(body)
		want := whole.finish(200, true)

		chunked := newBodyReader(p.decoder(nil), sse)
		step := int(split)%64 + 1
		for i := 0; i < len(body); i += step {
			chunked.write(body[i:min(i+step, len(body))])
		}
		got := chunked.finish(200, true)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("split every %d bytes it reads\n%+v\nwhole it reads\n%+v", step, got, want)
		}
		for _, c := range want.usage.Fields() {
			if c.Count.State == Present && c.Count.Value < 0 {
				t.Fatalf("%s present as %d", c.Name, c.Count.Value)
			}
		}
	})
}
