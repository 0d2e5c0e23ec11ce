package meterstore

import (
	"context"
	"fmt"
	"net/http"

	"github.com/wfbench/wfb/store"
)

// Exchange is one request of a metered attempt read back from the results
// file: its row and, when both bodies were kept whole, the bodies as the
// wire carried them (scrubbed of the attempt's secrets).
type Exchange struct {
	store.MeteredRequest
	ContentType string // the response's
	// RequestBody and ResponseBody are the bodies, when Whole.
	RequestBody, ResponseBody []byte
	// Whole says both bodies were kept (not cut at the attempt's exchange
	// budget, not left out).
	Whole bool
	// Err says why the exchange could not be read back: not in the file,
	// or a body that is not what its row records (store.ErrCorrupt).
	Err error
}

// Exchanges reads back the requests an attempt made through the metering
// proxy, in order, each with its exchange. A request whose exchange cannot
// be read carries why (Err), and the others are read all the same: what
// needs which is the reader's to say.
func Exchanges(ctx context.Context, db *store.DB, attemptID string) ([]Exchange, error) {
	reqs, err := db.Requests(ctx, attemptID)
	if err != nil {
		return nil, err
	}
	out := make([]Exchange, len(reqs))
	for i, r := range reqs {
		out[i] = readExchange(ctx, db, r)
	}
	return out, nil
}

// readExchange reads one request's exchange and decodes its bodies.
func readExchange(ctx context.Context, db *store.DB, r store.MeteredRequest) Exchange {
	e := Exchange{MeteredRequest: r}
	x, err := db.Exchange(ctx, r.RequestID)
	if err != nil {
		e.Err = err
		return e
	}
	e.ContentType = http.Header(x.ResponseHeaders).Get("Content-Type")
	if x.RequestTruncated || x.ResponseTruncated || x.Codec == "" {
		return e
	}
	if e.RequestBody, err = Body(x.Codec, x.RequestBody, x.RequestSize, x.RequestSHA256); err != nil {
		e.Err = fmt.Errorf("request body: %w", err)
		return e
	}
	if e.ResponseBody, err = Body(x.Codec, x.ResponseBody, x.ResponseSize, x.ResponseSHA256); err != nil {
		e.Err = fmt.Errorf("response body: %w", err)
		return e
	}
	e.Whole = true
	return e
}
