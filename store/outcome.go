package store

// AddFailure marks the result failed. The first kind stands (it is the
// cause); later problems are appended to the detail, so none is lost.
func (r *Result) AddFailure(kind, detail string) {
	r.OK = false
	if r.ErrorKind == "" {
		r.ErrorKind = kind
		r.ErrorDetail = detail
		return
	}
	r.ErrorDetail += "; also " + kind + ": " + detail
}

// AddDetail appends a note to the result's detail, leaving its outcome as
// it is: what was not measured and why, what the agent warned.
func (r *Result) AddDetail(note string) {
	if r.ErrorDetail == "" {
		r.ErrorDetail = note
		return
	}
	r.ErrorDetail += "; " + note
}
