// Package view is wfb's local results viewer: a read-only web app over a
// results file (net/http and html/template, every asset embedded, nothing
// fetched from elsewhere), the same pages written as a static site, and the
// one page of `wfb report --html` (WriteReportPage: a report's tables,
// charts and trend on a page that stands alone, its styles inline).
//
// Pages: Runs (every run with its cells, strict and clean rates and cost,
// filtered by label and day), Run (the report tables `wfb report` builds, a
// task × arm grid of cells coloured by outcome, the run's metadata), Attempt
// (every column, evidence, retries, the review artifact and its scores, the
// transcript as a conversation, the metered wire requests), Compare (two
// runs picked from lists, or labels or filters, as `wfb diff`) and Trend (a
// metric per arm across days or labels, as `wfb trend`, over the bench
// runs of one label or all, ad-hoc sessions only when asked).
//
// The viewer shows what the file holds: a review's findings and labels as
// its latest score kept them (it never parses an artifact or scores one),
// a transcript decoded through the store. It imports neither runner nor
// meter.
//
// Everything shown is agent-controlled text at some remove, so the pages
// are built with html/template (which escapes by context), are served with
// a Content-Security-Policy that allows script only from the viewer's own
// origin, and the server has no endpoint that writes.
package view
