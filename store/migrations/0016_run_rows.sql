-- 0016_run_rows: each finished run's attempts as the reports read them,
-- copied once when the run ends, so that a diff, a trend or the viewer's
-- run and compare pages decode a few blobs instead of stepping through
-- every results row (and its latest score) column by column.
--
-- run_rows holds, per run, the query the copy is the output of (the
-- select list of the reports' loader, over the run's results rows in rowid
-- order with each attempt's latest score: store.RunRowsSQL), the results
-- rowids it covers, and the greatest scores rowid when it was made;
-- run_row_chunks the output itself, a chunk of up to 4096 rows a blob, in
-- wfb's own encoding (store/runrows.go). It is a copy, never another
-- definition: a reader uses it only when the query it would send is the
-- one copied, the run's kept figures (run_stats) are current, the copy
-- covers up to the run's greatest results rowid, and no score of the
-- run's attempts landed since; otherwise it reads the rows. wfb makes it
-- with run_stats (the run's end, a merge) and again after a rescore; a
-- resume drops it. An upgrade copies the finished runs a file holds.
CREATE TABLE run_rows (
    run_id       TEXT PRIMARY KEY REFERENCES run_stats (run_id),
    query        TEXT NOT NULL,
    attempts     INTEGER NOT NULL CHECK (attempts >= 0),
    first_rowid  INTEGER NOT NULL CHECK (first_rowid >= 0),
    last_rowid   INTEGER NOT NULL CHECK (last_rowid >= first_rowid),
    scores_rowid INTEGER NOT NULL CHECK (scores_rowid >= 0)
) STRICT;

CREATE TABLE run_row_chunks (
    run_id TEXT NOT NULL REFERENCES run_rows (run_id),
    chunk  INTEGER NOT NULL CHECK (chunk >= 0),
    rows   INTEGER NOT NULL CHECK (rows >= 1),
    data   BLOB NOT NULL,
    PRIMARY KEY (run_id, chunk)
) STRICT;
