// Package meterstore connects the metering proxy (package meter) to the
// results file and to the runner.
//
// It converts the proxy's records to the results file's rows
// (store.MeteredRequest): meter imports nothing of wfb's and store knows
// nothing of the proxy, so every caller that writes what the proxy saw
// (wfb proxy, a metered session) converts here, and the two never disagree
// on a column. It gives the runner the proxy as its Meter (Start): each
// attempt's records come back as the runner's Wire — rows, the billed usage
// checked against the agent's, the wire's cost at the price table's list
// prices. It reads an attempt's exchanges back (Exchanges: what `wfb mock
// record` replays). And it runs the proxy on its own (Standalone, `wfb
// proxy`), writing every request as it finishes (Writer).
//
// It lives under runner, which it adapts the proxy to, because meter and
// store, at the bottom of the imports, import nothing of each other nor of
// anything above them; runner itself knows the proxy only by its Meter.
package meterstore
