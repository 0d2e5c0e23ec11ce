// Package wfb is the vocabulary every other package of wfb speaks, on the
// lowest floor of the import graph: it imports nothing of ours, and store,
// runner, report, view, meter, mock and cmd all import it.
//
// It holds the words a results file is written in and the rules that turn
// rows into the figures people read, so that no surface computes them its
// own way:
//
//   - error kinds and their two classes (kinds.go): a failure of the
//     workflow, or an error that kept it from being measured;
//   - process states and run statuses (kinds.go);
//   - usage sources and semantics (usage.go): which witness a row's usage
//     comes from, and how its token columns relate;
//   - check verdicts (check.go): the typed outcome of comparing the agent's
//     usage and cost with the wire's;
//   - the cell rule (cell.go): a cell counts once, by its final attempt, as
//     ok, failed or errored;
//   - the cost rule (cost.go): an attempt's cost is the wire's where the
//     wire priced it, else the agent's, else not measured;
//   - the secret rule (secret.go): which names (of environment variables,
//     headers, query parameters) say their value is a credential; and
//     redaction (redact.go): Redact and RedactJSON mask what looks like a
//     secret in text before anything keeps it;
//   - sandbox backend names (backend.go), from the strongest to the weakest;
//   - prices (price.go): a Price per million tokens by bucket, and the one
//     exact arithmetic that turns a usage into dollars;
//   - strict counts (count.go): a usage figure is a non-negative integer
//     written as one, or it is refused, never coerced;
//   - the codec of every kept body, and its one decoder (codec.go);
//   - how a message quotes a value (text.go): Clip, never inside a rune.
//
// The SQL views of the results file (store/migrations) spell the cell and
// cost rules again in SQL, for ad hoc queries; store's tests hold the two
// spellings to the same answers case by case.
package wfb
