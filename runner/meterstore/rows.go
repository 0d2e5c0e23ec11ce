package meterstore

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/meter"
	"github.com/wfbench/wfb/store"
)

// Rows converts records, in order.
func Rows(recs []meter.Record) []store.MeteredRequest {
	out := make([]store.MeteredRequest, len(recs))
	for i, r := range recs {
		out[i] = Row(r)
	}
	return out
}

// Row converts one record: NULL stays NULL (a figure the wire did not
// carry, or carried as nonsense, is nil with its raw text and the reason
// kept), and the exchange comes along when anything of it was kept.
func Row(r meter.Record) store.MeteredRequest {
	row := store.MeteredRequest{
		RequestID: r.ID, AttemptID: r.AttemptID, Seq: r.Seq,
		Protocol: r.Protocol, Method: r.Method, Path: r.Path,
		RequestedModel: r.RequestedModel, ResponseModel: r.ResponseModel,
		StartedAt: r.StartedAt, LatencyMS: r.Latency.Milliseconds(),
		Streamed: r.Streamed, RequestBytes: r.RequestBytes, ResponseBytes: r.ResponseBytes,
		ErrorType: r.ErrorType, ProxyError: r.ProxyError, ErrorDetail: r.ErrorDetail,
		RetryOf: seqPtr(r.RetryOf), FallbackOf: seqPtr(r.FallbackOf),
		Billed: r.Billed, UsageSemantics: r.Usage.Semantics,
		InputTokens: r.Usage.Input.Ptr(), OutputTokens: r.Usage.Output.Ptr(),
		CacheReadInputTokens:     r.Usage.CacheRead.Ptr(),
		CacheCreationInputTokens: r.Usage.CacheCreation.Ptr(),
		ReasoningOutputTokens:    r.Usage.Reasoning.Ptr(),
		UsageRaw:                 r.Usage.RawValues(),
		UsageProblem:             strings.Join(r.Usage.Problems(), "; "),
	}
	if r.Status != 0 {
		s := int64(r.Status)
		row.Status = &s
	}
	if r.TTFB != nil {
		ms := r.TTFB.Milliseconds()
		row.TTFBMS = &ms
	}
	if row.LatencyMS < 0 {
		row.LatencyMS = 0
	}
	row.Exchange = exchange(r.Exchange)
	return row
}

func exchange(x meter.Exchange) *store.Exchange {
	out := &store.Exchange{
		RequestHeaders: header(x.RequestHeader), ResponseHeaders: header(x.ResponseHeader),
		RequestSize: x.Request.Size, RequestSHA256: x.Request.SHA256, RequestTruncated: x.Request.Truncated,
		ResponseSize: x.Response.Size, ResponseSHA256: x.Response.SHA256, ResponseTruncated: x.Response.Truncated,
	}
	if x.Request.Codec != "" || x.Response.Codec != "" {
		out.Codec = wfb.CodecZstd
		out.RequestBody, out.ResponseBody = x.Request.Data, x.Response.Data
	}
	return out
}

func header(h http.Header) map[string][]string {
	if h == nil {
		return nil
	}
	return map[string][]string(h)
}

func seqPtr(seq int) *int64 {
	if seq == 0 {
		return nil
	}
	v := int64(seq)
	return &v
}

// Body decodes a stored exchange body of size bytes, checked against its
// size and digest: the kept bytes, scrubbed, as the wire carried them. A
// body not kept is nil. A body that is not what its row records (another
// size, another digest, not zstd) is store.ErrCorrupt: the results file
// was damaged, or forged.
func Body(codec string, data []byte, size int64, sha string) ([]byte, error) {
	if data == nil {
		return nil, nil
	}
	b, err := meter.Body{Codec: codec, Data: data, Size: size, SHA256: sha}.Decode()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", store.ErrCorrupt, err)
	}
	return b, nil
}
