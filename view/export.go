package view

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/store"
)

// ExportStats says what Export wrote.
type ExportStats struct {
	Runs, Attempts, Trends, Compares int
}

// ExportOptions say what an export writes besides its every page.
type ExportOptions struct {
	// Compares are comparisons to write too, and to link from the index:
	// each side a run id or a label (every run with it), as wfb diff takes
	// them.
	Compares []ComparePair
}

// ComparePair is a comparison of side A with side B.
type ComparePair struct{ A, B string }

// Export writes the viewer's pages into dir as a static site: index.html
// (the runs), run/ID.html, attempt/ID.html, trend/METRIC-BY.html,
// compare/A..B.html (each run with the previous run of its label, and each
// of opts.Compares) and static/. Links between them are relative, so the
// directory can be moved, zipped or served as it is.
//
// A comparison whose side names no run or label, or selects no attempts,
// is an error wrapping report.ErrSelection that names every such side, and
// nothing is written.
//
// It writes only inside dir and never follows a symlink it finds there
// (dir itself is the caller's name and may be one): each file is written
// beside its name and renamed over it, so a symlink at that name is
// replaced, not written through; a subdirectory that is a symlink is
// refused. Every write goes through an os.Root of dir, which refuses a
// path leaving it whatever changes meanwhile.
func (s *Server) Export(ctx context.Context, dir string, opts ExportOptions) (ExportStats, error) {
	var st ExportStats
	if err := s.checkSides(ctx, opts.Compares); err != nil {
		return st, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return st, fmt.Errorf("export: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return st, fmt.Errorf("export: %w", err)
	}
	defer root.Close()
	for _, sub := range []string{"run", "attempt", "trend", "compare", "static"} {
		if err := exportSubdir(root, sub); err != nil {
			return st, err
		}
	}
	if err := copyStatic(root); err != nil {
		return st, err
	}
	top, sub := links{export: true}, links{root: "../", export: true}
	runs, err := s.runsData(ctx, top, "", "")
	if err != nil {
		return st, err
	}
	if st.Compares, err = s.exportCompares(ctx, root, sub, runs.Runs, opts.Compares); err != nil {
		return st, err
	}
	runs.Compares = opts.Compares
	if err := s.writePage(root, "index.html", "runs", runs); err != nil {
		return st, err
	}
	for _, r := range runs.Runs {
		d, err := s.runData(ctx, sub, r.ID, false)
		if err != nil {
			return st, err
		}
		if err := s.writePage(root, path.Join("run", fileName(r.ID)+".html"), "run", d); err != nil {
			return st, err
		}
		st.Runs++
	}
	if st.Trends, err = s.exportTrends(ctx, root, sub); err != nil {
		return st, err
	}
	var ids []string
	err = s.db.Each(ctx, `SELECT attempt_id FROM results ORDER BY rowid`, nil, func(sc store.Scanner) error {
		var id string
		err := sc.Scan(&id)
		ids = append(ids, id)
		return err
	})
	if err != nil {
		return st, fmt.Errorf("export: list attempts: %w", err)
	}
	for _, id := range ids {
		d, err := s.attemptData(ctx, sub, id)
		if err != nil {
			return st, err
		}
		if err := s.writePage(root, path.Join("attempt", fileName(id)+".html"), "attempt", d); err != nil {
			return st, err
		}
		st.Attempts++
	}
	return st, nil
}

// exportTrends writes trend/METRIC-BY.html, over the bench runs (the
// ad-hoc sessions left out, and said so), for every metric either
// bucketing has (and the strict pass rate and cost, which the runs page
// links to),
// under each bucketing: a metric one bucketing lacks says so on its page.
func (s *Server) exportTrends(ctx context.Context, root *os.Root, l links) (int, error) {
	trends := map[string]*report.Trend{}
	kept := map[string]trendRuns{}
	keys := []string{defaultTrendMetric, "cost_usd"}
	for _, by := range trendBys {
		tr, k, err := s.trendOf(ctx, by, trendFilter{})
		if err != nil {
			return 0, err
		}
		trends[by], kept[by] = tr, k
		for _, m := range trendPageData(l, tr, by, "", trendFilter{}, k).Metrics {
			if !slices.Contains(keys, m.Key) {
				keys = append(keys, m.Key)
			}
		}
	}
	n := 0
	for _, by := range trendBys {
		for _, key := range keys {
			d := trendPageData(l, trends[by], by, key, trendFilter{}, kept[by])
			if err := s.writePage(root, path.Join("trend", fileName(key+"-"+by)+".html"), "trend", d); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// exportCompares writes compare/PREV..ID.html for each run with a previous
// run of its label, the page the runs page links to, and compare/A..B.html
// for each of named, which checkSides has checked. A run with its previous
// run that wfb diff cannot compare (a side with no attempts) gets no page,
// and its run no link: Prev is cleared.
func (s *Server) exportCompares(ctx context.Context, root *os.Root, l links, rows []runRow, named []ComparePair) (int, error) {
	all, err := report.LoadRuns(ctx, s.db)
	if err != nil {
		return 0, err
	}
	written := map[string]bool{}
	write := func(a, b string) error {
		name := compareFile(a, b)
		if written[name] {
			return nil
		}
		d := &compareData{L: l, A: a, B: b, Alpha: strconv.FormatFloat(compareAlpha, 'g', -1, 64)}
		if err := s.compare(ctx, d, all, compareAlpha); err != nil {
			return err
		}
		written[name] = true
		return s.writePage(root, path.Join("compare", name+".html"), "compare", d)
	}
	for i := range rows {
		r := &rows[i]
		if r.Prev == "" {
			continue
		}
		var empty *report.EmptySideError
		if err := write(r.Prev, r.ID); errors.As(err, &empty) {
			r.Prev = ""
		} else if err != nil {
			return len(written), err
		}
	}
	for _, p := range named {
		if err := write(p.A, p.B); err != nil {
			return len(written), err
		}
	}
	return len(written), nil
}

// checkSides refuses comparisons a side of which names no run or label or
// selects no attempts, naming every such side, before anything is
// written.
func (s *Server) checkSides(ctx context.Context, pairs []ComparePair) error {
	if len(pairs) == 0 {
		return nil
	}
	runs, err := report.LoadRuns(ctx, s.db)
	if err != nil {
		return err
	}
	present, err := report.RunsWithRows(ctx, s.db, report.Selection{Spec: "all"})
	if err != nil {
		return err
	}
	var unknown, empty []string
	seen := map[string]bool{}
	for _, p := range pairs {
		for _, name := range []string{p.A, p.B} {
			if seen[name] {
				continue
			}
			seen[name] = true
			named, attempts := false, false
			for _, r := range runs {
				if r.ID == name || r.Label == name {
					named = true
					attempts = attempts || present[r.ID]
				}
			}
			switch {
			case !named:
				unknown = append(unknown, strconv.Quote(name))
			case !attempts:
				empty = append(empty, strconv.Quote(name))
			}
		}
	}
	var problems []string
	if len(unknown) > 0 {
		problems = append(problems, "no run or label "+strings.Join(unknown, ", ")+" (see wfb runs)")
	}
	if len(empty) > 0 {
		problems = append(problems, strings.Join(empty, ", ")+" selects no attempts")
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", report.ErrSelection, strings.Join(problems, "; "))
	}
	return nil
}

// compareFile is the export's file name for the comparison of a with b.
func compareFile(a, b string) string { return fileName(a + ".." + b) }

// exportSubdir makes the subdirectory name of the export, or takes the one
// there; a symlink there is refused, never followed.
func exportSubdir(root *os.Root, name string) error {
	fi, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := root.Mkdir(name, 0o755); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("export: %w", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("export: %s is a symlink: the export writes only inside %s and follows none; remove it, or export into an empty directory",
			filepath.Join(root.Name(), name), root.Name())
	case !fi.IsDir():
		return fmt.Errorf("export: %s is not a directory; remove it, or export into an empty directory", filepath.Join(root.Name(), name))
	}
	return nil
}

// writePage renders the page name into the export's file rel.
func (s *Server) writePage(root *os.Root, rel, name string, data any) error {
	return writeExportFile(root, rel, func(w io.Writer) error { return s.render(w, name, data) })
}

// writeExportFile writes rel in root whole: into a new file beside it, then
// renamed over it, so that whatever is at rel — a symlink included — is
// replaced, never written through.
func writeExportFile(root *os.Root, rel string, write func(io.Writer) error) error {
	tmp := path.Join(path.Dir(rel), "."+path.Base(rel)+".tmp-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, rel)
	}
	if err != nil {
		root.Remove(tmp)
		return fmt.Errorf("export %s: %w", filepath.Join(root.Name(), rel), err)
	}
	return nil
}

func copyStatic(root *os.Root) error {
	return fs.WalkDir(staticFS, "static", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		return writeExportFile(root, path.Join("static", e.Name()), func(w io.Writer) error {
			_, err := w.Write(b)
			return err
		})
	})
}

var plainName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]*$`) })

// fileName is an id as a file name: itself when it is plain, else a digest
// of it (an id from a merged or hand-written file may hold anything).
func fileName(id string) string {
	if plainName().MatchString(id) && len(id) <= 200 {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "id-" + hex.EncodeToString(sum[:12])
}
