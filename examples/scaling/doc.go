// Package scaling holds no code: its directory holds the Kubernetes Indexed
// Job and the GitHub Actions workflow that docs/scaling-out.md shows, and its
// test checks them against the Kubernetes API types and actionlint, and checks
// that the page shows them as they are.
package scaling
