package view

import (
	"context"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

func exportFixture(t *testing.T) (*fixture, string) {
	t.Helper()
	f := newFixture(t)
	s, err := New(context.Background(), f.open(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := s.Export(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	// Trends: every metric the file has (9) under day and label; one
	// comparison: run B with run A, the run before it with its label.
	if st.Runs != 2 || st.Attempts != 9 || st.Trends != 18 || st.Compares != 1 {
		t.Fatalf("exported %d runs, %d attempts, %d trend pages, %d comparisons; want 2, 9, 18 and 1", st.Runs, st.Attempts, st.Trends, st.Compares)
	}
	return f, dir
}

var linkAttr = regexp.MustCompile(`(?:href|src|action)="([^"]*)"`)

// The static export is the same pages, every link between them resolving
// to a file of the export, and nothing pointing off the site.
func TestTheExportIsASelfContainedStaticSite(t *testing.T) {
	f, dir := exportFixture(t)
	pages, _ := filepath.Glob(filepath.Join(dir, "*", "*.html"))
	pages = append(pages, filepath.Join(dir, "index.html"))
	checked := 0
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "<script>document") {
			t.Errorf("%s: injected markup unescaped", p)
		}
		for _, m := range linkAttr.FindAllStringSubmatch(string(b), -1) {
			link := html.UnescapeString(m[1])
			if strings.Contains(link, ":") || strings.HasPrefix(link, "/") {
				t.Errorf("%s: link %q leaves the site", p, link)
				continue
			}
			target := filepath.Join(filepath.Dir(p), strings.SplitN(link, "?", 2)[0])
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s: link %q resolves to nothing", p, link)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Errorf("only %d links checked", checked)
	}
	trend, _ := os.ReadFile(filepath.Join(dir, "trend", "cost_usd-day.html"))
	for _, want := range []string{`<svg class="trend"`, "Trend of cost (USD) by day", `href="../trend/cost_usd-label.html"`} {
		if !strings.Contains(string(trend), want) {
			t.Errorf("exported trend page lacks %q", want)
		}
	}
	index, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	compare, _ := os.ReadFile(filepath.Join(dir, "compare", f.runA+".."+f.runB+".html"))
	if !strings.Contains(string(index), `href="compare/`+f.runA+".."+f.runB+`.html"`) || !strings.Contains(string(compare), `<svg class="forest" data-key="cost_usd"`) {
		t.Error("the export lacks run B's comparison with run A, its chart, or the runs page's link to it")
	}
	b, _ := os.ReadFile(filepath.Join(dir, "attempt", f.failed+".html"))
	for _, want := range []string{"tool call: Bash", "&lt;script&gt;", `href="../attempt/` + f.retry + `.html"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("exported attempt page lacks %q", want)
		}
	}
}

// The exported pages work in a browser from disk: links (the comparison
// with its chart among them), the keyboard script, no console error.
func TestTheExportWorksInABrowserFromDisk(t *testing.T) {
	f, dir := exportFixture(t)
	b := newBrowser(t)
	b.do(t, "index", chromedp.Navigate("file://"+filepath.Join(dir, "index.html")), chromedp.WaitVisible(css("table.runs")))
	b.do(t, "compare", chromedp.Click(css(`a[href="compare/`+f.runA+`..`+f.runB+`.html"]`)), chromedp.WaitVisible(css(`svg.forest[data-key="cost_usd"]`)))
	b.do(t, "index again", chromedp.NavigateBack(), chromedp.WaitVisible(css("table.runs")))
	b.do(t, "run", chromedp.Click(css(`a[href="run/`+f.runA+`.html"]`)), chromedp.WaitVisible(css("table.grid")))
	b.do(t, "j", chromedp.KeyEvent("j"), chromedp.WaitVisible(css("section.transcript")))
	if loc := result(t, b, "location", chromedp.Location()); !strings.HasSuffix(loc, "/attempt/"+f.failed+".html") {
		t.Errorf("j went to %s", loc)
	}
	b.check(t, "file://"+dir)
}
