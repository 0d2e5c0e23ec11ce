package view

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"

	"github.com/wfbench/wfb/report"
)

// pageNames are the templates, each parsed with the layout.
var pageNames = []string{"runs", "run", "attempt", "compare", "trend", "report"}

// foldNotesOver is how many notes a page shows open under a table: more
// fold into a <details> that says how many there are, so that the next
// table is not pushed out of sight. Every note is still in the page.
const foldNotesOver = 4

func parsePages() (map[string]*template.Template, error) {
	funcs := template.FuncMap{"value": value, "null": func(v any) bool { return v == nil }, "numeric": numeric,
		// fold says a table's notes fold into a <details>.
		"fold": func(notes []string) bool { return len(notes) > foldNotesOver },
		"join": func(s []string) string { return strings.Join(s, ", ") },
		// inlineCSS is the stylesheet, for a page that stands alone.
		"inlineCSS": func() (template.CSS, error) {
			b, err := staticFS.ReadFile("static/view.css")
			return template.CSS(b), err
		}}
	pages := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/charts.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("view: parse %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// value shows a cell: NULL for nil (not measured), numbers as they are.
func value(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case float64:
		return strconv.FormatFloat(x, 'g', 8, 64)
	case []byte:
		return string(x)
	case report.Items:
		return x.Text
	}
	return fmt.Sprint(v)
}

func numeric(v any) bool {
	switch v.(type) {
	case int, int64, float64:
		return true
	}
	return false
}
