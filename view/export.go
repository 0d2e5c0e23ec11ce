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
	"time"

	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/store"
)

// ExportStats says what Export wrote.
type ExportStats struct {
	Runs, Attempts, Trends, Compares int
}

// Export writes the viewer's pages into dir as a static site: index.html
// (the runs), run/ID.html, attempt/ID.html, trend/METRIC-BY.html,
// compare/PREV..ID.html (each run with the previous run of its label) and
// static/. Links between them are relative, so the directory can be moved,
// zipped or served as it is.
//
// It writes only inside dir and never follows a symlink it finds there
// (dir itself is the caller's name and may be one): each file is written
// beside its name and renamed over it, so a symlink at that name is
// replaced, not written through; a subdirectory that is a symlink is
// refused. Every write goes through an os.Root of dir, which refuses a
// path leaving it whatever changes meanwhile.
func (s *Server) Export(ctx context.Context, dir string) (ExportStats, error) {
	var st ExportStats
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
	if st.Compares, err = s.exportCompares(ctx, root, sub, runs.Runs); err != nil {
		return st, err
	}
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
// run of its label: the page the runs page links to. A pair wfb diff
// cannot compare (a side with no attempts) gets no page, and its run no
// link: Prev is cleared.
func (s *Server) exportCompares(ctx context.Context, root *os.Root, l links, rows []runRow) (int, error) {
	all, err := report.LoadRuns(ctx, s.db)
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range rows {
		r := &rows[i]
		if r.Prev == "" {
			continue
		}
		d := &compareData{L: l, A: r.Prev, B: r.ID, Alpha: strconv.FormatFloat(compareAlpha, 'g', -1, 64)}
		var empty *report.EmptySideError
		if err := s.compare(ctx, d, all, compareAlpha); errors.As(err, &empty) {
			r.Prev = ""
			continue
		} else if err != nil {
			return n, err
		}
		if err := s.writePage(root, path.Join("compare", compareFile(r.Prev, r.ID)+".html"), "compare", d); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
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

var plainName = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]*$`)

// fileName is an id as a file name: itself when it is plain, else a digest
// of it (an id from a merged or hand-written file may hold anything).
func fileName(id string) string {
	if plainName.MatchString(id) && len(id) <= 200 {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "id-" + hex.EncodeToString(sum[:12])
}
