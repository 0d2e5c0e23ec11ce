package view

import "net/url"

// links builds the URLs between pages, relative to the page they are on,
// so the same templates serve the server (/run/ID) and the static export
// (run/ID.html) alike.
type links struct {
	root   string // "../" per level below the top
	export bool   // a static site: pages end in .html, no query pages
	single bool   // one page on its own: styles inline, no links, no script
}

func (l links) ext() string {
	if l.export {
		return ".html"
	}
	return ""
}

// Runs is the runs page.
func (l links) Runs() string {
	switch {
	case l.export:
		return l.root + "index.html"
	case l.root == "":
		return "./"
	}
	return l.root
}

// Run is a run's page.
func (l links) Run(id string) string { return l.root + "run/" + l.name(id) + l.ext() }

// Attempt is an attempt's page.
func (l links) Attempt(id string) string {
	return l.root + "attempt/" + l.name(id) + l.ext()
}

// Static is an embedded asset.
func (l links) Static(name string) string { return l.root + "static/" + name }

// Compare compares a with b: in a static export, the page written for a
// run and the previous run of its label, or for a comparison asked for.
func (l links) Compare(a, b string) string {
	if l.export {
		return l.root + "compare/" + compareFile(a, b) + ".html"
	}
	return l.root + "compare?" + url.Values{"a": {a}, "b": {b}}.Encode()
}

// Trend is the trend of metric (a line key) by day or label: a query
// page on the server, a page per metric and bucketing in an export.
func (l links) Trend(metric, by string) string { return l.TrendOf(metric, by, trendFilter{}) }

// TrendOf is the trend of metric by day or label over the runs f keeps.
// An export writes the trends of bench runs of every label only.
func (l links) TrendOf(metric, by string, f trendFilter) string {
	if l.export {
		return l.root + "trend/" + fileName(metric+"-"+by) + ".html"
	}
	q := url.Values{"metric": {metric}, "by": {by}}
	if f.Label != "" {
		q.Set("label", f.Label)
	}
	if f.Sessions {
		q.Set("sessions", "1")
	}
	return l.root + "trend?" + q.Encode()
}

// Export says the page is part of a static export.
func (l links) Export() bool { return l.export }

// Single says the page stands alone (wfb report --html): it carries its
// styles and links to no other page.
func (l links) Single() bool { return l.single }

// Root is the way up to the top of the site from this page.
func (l links) Root() string { return l.root }

// name is an id in a link: its file name in an export.
func (l links) name(id string) string {
	if l.export {
		return fileName(id)
	}
	return url.PathEscape(id)
}
