package view

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/wfbench/wfb/report"
)

// ReportPage is what `wfb report --html` shows: the report's tables, the
// charts drawn from the tabulation they come from and, over several days
// or labels, the trend. The caller (cmd/wfb) selects and builds them as
// `wfb report` does; the viewer only renders.
type ReportPage struct {
	Title  string
	Tables []*report.Table
	// Charts is the tabulation the tables come from, tabulated with Keep
	// including CostUSD and Turns (and the quality metrics, for the cost
	// versus quality chart). The charts follow its grouping: one set per
	// task when it is by task and arm, one over every task otherwise.
	Charts *report.Tabulation
	// Trend, when it has more than one bucket, is drawn as the trend page
	// draws it, one chart per metric.
	Trend *report.Trend
	// Tampered, when not empty, says the results file's schema was changed
	// outside wfb (store.DB.Tampered): the page says so on top.
	Tampered []string
}

// reportData is the report page's template data.
type reportData struct {
	Title    string
	L        links
	Sections []chartsHTML
	Trends   []*chart
	TrendBy  string
	Buckets  int
	Tables   []*report.Table
}

// chartsHTML is one set of charts, drawn: every arm's, or one task's.
type chartsHTML struct {
	Task    string
	Figures template.HTML
}

// WriteReportPage writes p to path as one self-contained page of the
// viewer: styles inline, charts inline SVG, no script and nothing that
// refers to another resource — no link, font, image or other page — so it
// opens from file:// offline and leaks nothing when shared. It is written
// beside path and renamed over it, as an export's pages are: a symlink at
// path is replaced, not written through.
func WriteReportPage(path string, p ReportPage) error {
	pages, err := parsePages()
	if err != nil {
		return err
	}
	d := reportData{Title: p.Title, L: links{single: true}, Tables: p.Tables}
	if p.Charts != nil && len(p.Charts.Groups) > 0 {
		d.Sections = drawReportCharts(p.Charts)
	}
	if tr := p.Trend; tr != nil && len(tr.Buckets) > 1 {
		d.TrendBy, d.Buckets = tr.Options.By, len(tr.Buckets)
		var keys []string
		for _, pt := range tr.Points {
			if !slices.Contains(keys, pt.Key) {
				keys = append(keys, pt.Key)
			}
		}
		for _, k := range keys {
			var pts []report.TrendPoint
			for _, pt := range tr.Points {
				if pt.Key == k {
					pts = append(pts, pt)
				}
			}
			if c := trendChart(tr.Options.By, tr.Buckets, pts); c != nil {
				d.Trends = append(d.Trends, c)
			}
		}
	}
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("write html report: %w", err)
	}
	defer root.Close()
	return writeExportFile(root, filepath.Base(path), func(w io.Writer) error {
		return renderPage(w, pages["report"], d, p.Tampered)
	})
}

// drawReportCharts draws the charts of a tabulation, a set per section
// (chartSections): cost against quality, outcomes, and the distributions
// of cost and turns where the tabulation has them.
func drawReportCharts(tab *report.Tabulation) []chartsHTML {
	styles := armStyles(tab)
	var out []chartsHTML
	for _, sec := range chartSections(tab) {
		var b bytes.Buffer
		scatter(&b, sec, styles)
		kindBars(&b, sec, styles)
		for _, m := range []report.Metric{report.CostUSD, report.Turns} {
			if hasMetric(tab.Options.Metrics, m) {
				boxPlot(&b, sec, m, styles)
			}
		}
		// Every text in b is escaped (htmlText) as it is written.
		out = append(out, chartsHTML{Task: sec.task, Figures: template.HTML(b.String())})
	}
	return out
}
