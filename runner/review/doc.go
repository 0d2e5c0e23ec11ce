// Package review reads the artifact a review session leaves behind: a strict
// parse of review-output.json that tells a session that never wrote it
// (ErrArtifactMissing, recorded as artifact-missing) from one that wrote
// something wrong (*InvalidError, recorded as artifact-invalid, with the
// field and value that failed).
package review
