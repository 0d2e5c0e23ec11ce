// Package strictyaml reads a YAML file strictly by walking its syntax tree
// rather than decoding it into structs, so that a loader can report every
// problem at once, each with its file, line, column and field path, instead
// of stopping at the first.
//
// A Walker holds the helpers such a loader is built from: one-document
// parsing, anchors and aliases (bounded, against "billion laughs" files),
// mappings without merge keys or duplicate keys, and typed scalars whose
// mistakes are recorded as a Problem with a position. A loader walks its own
// fields with them and turns the problems into one *Error with Err.
//
// The mock provider's script loader and the bench loader use it. It imports
// nothing of wfb.
package strictyaml
