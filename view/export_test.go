package view

import (
	"context"
	"errors"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb/report"
)

func exportFixture(t *testing.T) (*fixture, string) {
	t.Helper()
	f := newFixture(t)
	s, err := New(context.Background(), f.open(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := s.Export(context.Background(), dir, ExportOptions{})
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

// treeOf lists every path under dir with its content (a symlink as its
// target), to see that nothing under it changed.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case e.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			tree[rel] = "-> " + target
			return err
		case e.IsDir():
			tree[rel] = "dir"
		default:
			b, err := os.ReadFile(p)
			tree[rel] = string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// The export writes only inside its directory: a symlink already there —
// to a page, to a static file, to a subdirectory — is never followed. (It
// was: the export overwrote a symlink's target and wrote a page outside
// DIR.) A symlinked file is replaced by the page (written beside it, then
// renamed over it); a symlinked subdirectory is refused, nothing written
// through it.
func TestTheExportNeverFollowsASymlinkInItsDirectory(t *testing.T) {
	f := newFixture(t)
	s, err := New(context.Background(), f.open(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	static, err := os.ReadDir("static")
	if err != nil || len(static) == 0 {
		t.Fatalf("static files: %v", err)
	}
	for _, c := range []struct {
		name  string
		links map[string]string // path in DIR → target outside (a file, or a directory with /)
		fails bool
	}{
		{"files", map[string]string{"index.html": "victim.html", "static/" + static[0].Name(): "static-victim"}, false},
		{"a subdirectory", map[string]string{"run": "rundir/"}, true},
		{"a subdirectory's file", map[string]string{"static": "staticdir/"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			for name, target := range c.links {
				target = filepath.Join(outside, target)
				if strings.HasSuffix(c.links[name], "/") {
					if err := os.Mkdir(target, 0o755); err != nil {
						t.Fatal(err)
					}
				} else if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
					t.Fatal(err)
				}
			}
			before := treeOf(t, outside)
			_, err := s.Export(context.Background(), dir, ExportOptions{})
			if c.fails != (err != nil) || (err != nil && !strings.Contains(err.Error(), "symlink")) {
				t.Errorf("export: %v; want refused naming the symlink: %v", err, c.fails)
			}
			if diff := cmp.Diff(before, treeOf(t, outside)); diff != "" {
				t.Errorf("outside DIR (-before +after):\n%s", diff)
			}
			if c.fails {
				return
			}
			for name := range c.links {
				fi, err := os.Lstat(filepath.Join(dir, name))
				if err != nil || !fi.Mode().IsRegular() {
					t.Errorf("%s after the export: %v, %v; want the page, a regular file", name, fi, err)
				}
			}
		})
	}
}

// The export writes the comparisons it is asked for, of any two runs or
// labels, and its index links them (it wrote only each run with the
// previous run of its label).
func TestTheExportWritesTheComparisonsItIsAskedFor(t *testing.T) {
	f := newFixture(t)
	addSessionAndWeekly(t, f)
	s, err := New(context.Background(), f.open(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	asked := []ComparePair{{f.runA, "run-w"}, {"nightly", "weekly"}, {f.runA, f.runB}}
	st, err := s.Export(context.Background(), dir, ExportOptions{Compares: asked})
	if err != nil {
		t.Fatal(err)
	}
	// run B with run A (also asked for, written once), and the two others.
	if st.Compares != 3 {
		t.Errorf("%d comparisons written, want 3", st.Compares)
	}
	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range asked {
		name := p.A + ".." + p.B + ".html"
		page, err := os.ReadFile(filepath.Join(dir, "compare", name))
		if err != nil {
			t.Errorf("no page for %s with %s: %v", p.A, p.B, err)
			continue
		}
		if want := "<h1>Compare " + p.A + " with " + p.B + "</h1>"; !strings.Contains(string(page), want) || !strings.Contains(string(page), `<svg class="forest" data-key="cost_usd"`) {
			t.Errorf("%s lacks %q or its cost chart", name, want)
		}
		if link := `<li><a href="compare/` + name + `">` + p.A + " with " + p.B + "</a></li>"; !strings.Contains(string(index), link) {
			t.Errorf("the index lacks %q", link)
		}
	}
}

// A comparison naming a run or label the file lacks is refused before
// anything is written, every unknown name named.
func TestTheExportRefusesAComparisonOfNothingAndWritesNothing(t *testing.T) {
	f := newFixture(t)
	s, err := New(context.Background(), f.open(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "site")
	_, err = s.Export(context.Background(), dir, ExportOptions{Compares: []ComparePair{{f.runA, "nope"}, {"gone", f.runB}}})
	if !errors.Is(err, report.ErrSelection) || !strings.Contains(err.Error(), `no run or label "nope", "gone"`) {
		t.Errorf("export: %v; want a selection error naming nope and gone", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after a refused export: %v; want nothing written", dir, err)
	}
}
