// Package report turns the results file into the tables of `wfb runs`,
// `wfb report`, `wfb diff`, `wfb export`, `wfb session`, `wfb merge` and
// `wfb rescore` (the HTML page of `wfb report --html` is the viewer's:
// package view renders it from report's tables).
//
// The pipeline has three stages, as benchstat's does:
//
//   - Loading (LoadColumns, LoadRuns, LoadRunStats, ResolveSelection,
//     LoadRows, Export) reads the file through a read-only Source: LoadRows
//     streams one typed row at a time into the builders (Export reads in
//     chunks), so a million attempts never sit in memory as raw values. Review-quality metrics come from each attempt's latest score
//     when the file has a scores table, and are absent otherwise.
//     DiffSides is the one loop from two typed sides to a Diff, for wfb
//     diff and the viewer's compare page alike.
//   - Building (Tabulator, Differ, RunsTable, ResultTable, MergeTable,
//     RescoreTable) is pure: rows in, a Tabulation, Diff or Table out, with
//     every warning kept as data (footnotes), never printed or dropped.
//     What a Tabulator keeps is a value per cell and metric, as int32
//     where that is exact (numCol): a million cells take some 50 MB.
//     Statistics come from report/stats. TrendChartOf lays a trend out as a
//     chart (axis, ticks, marks), the geometry the viewer draws.
//   - Rendering (Tables, Render, RenderAll) spells the result
//     for people (table, tsv, markdown: rounded, units in the column
//     names) or for programs (csv, json: one wide table, full precision,
//     stable snake_case keys).
//
// NULL means "not measured" throughout: a median is taken over measured
// values with n beside it, a cost total is NULL (or, for people, a lower
// bound marked *) unless every attempt's cost was measured, and nothing is
// ever zero-filled.
//
// One definition of every metric serves `wfb report`, `wfb diff` and `wfb
// trend` alike, computed in one place (Tabulator.Add; the Differ keeps each
// side's cells in a Tabulator):
//
//   - The unit is the cell (run, task, arm, rep), not the attempt. A cell's
//     outcome is its final attempt's — the highest attempt number, where
//     its retry chain ended (isFinal) — and its tokens, cost, turns and wall
//     time are sums over all its attempts, retries included; its review
//     quality is its final attempt's, the artifact the cell ended with.
//   - Centres are medians over cells (with n, the cells measured), pass
//     rates are over cells.
//
// Why per cell: the cell is what the bench asks for and what a user pays
// for. Counting attempts would weigh a cell that hit a provider error and
// was retried twice three times over, and would make a flaky provider look
// like a cheaper workflow (a failed attempt's few tokens pull the median
// down); summing the retries charges the cell what it really cost. Cells
// are also independent units for the tests (an attempt and its retry are
// not), and they are what pairs across runs (task and rep). Superseded
// attempts are not dropped: the report counts them (attempts, retried) and
// names the kinds they ended with.
//
// Two pass rates stand side by side, and no cell ever leaves the strict
// one:
//
//	strict rate = ok / cells
//	clean rate  = ok / (cells − errored)
//
// where errored cells ended with an error the workflow was never fairly
// measured on — infra-error, sandbox-refused, spawn-failure, cancelled,
// provider-error, oracle-failed (see wfb.IsErrored). Every other kind
// (session-error, timeout, workspace-modified, artifact-missing,
// artifact-invalid, verify-failed, and any kind wfb does not know) is a
// failure of the workflow and counts against it in both.
package report
