package report

// DoctorRow is one sandbox backend as `wfb doctor` found it on this machine.
// (report does not import sandbox; cmd fills these from sandbox.Status.)
type DoctorRow struct {
	Backend string
	Usable  bool
	Reason  string
}

// DoctorTable builds the table `wfb doctor` prints: each backend, whether
// it is usable here, and the reason (the fix, when it is not).
func DoctorTable(rows []DoctorRow) *Table {
	t := &Table{Columns: []string{"backend", "usable", "reason"}}
	for _, r := range rows {
		usable := "no"
		if r.Usable {
			usable = "yes"
		}
		t.Rows = append(t.Rows, []any{r.Backend, usable, r.Reason})
	}
	return t
}
