// Package bench is the bench file: an experiment of tasks × arms ×
// repetitions, with the defaults every cell shares (examples/bench.yaml
// documents every field).
//
// Load parses a bench strictly, walking the YAML syntax tree itself
// (yaml.go) so that every problem — in the file and in the mock scripts it
// names — comes back at once in one *Error, each with its file, line,
// column and field: one edit fixes them all, and a bench that is half
// valid never starts. Secrets never come from the file; an arm names the
// variables they come from.
//
// What a run is made of is decided here too: Plan turns a Selection into
// cells in run order, a Fingerprint says what a run's results depend on
// besides the model (so that a resume can refuse a changed bench), and
// shards split the cells deterministically across processes and machines
// (ParseShard, ShardFromEnv, InShard). The package runs nothing: the
// runner runs the cells.
package bench
