// Package provider is wfb's scripted model provider: an HTTP server on
// loopback that speaks the Anthropic Messages API, the OpenAI Responses API,
// the OpenAI Chat Completions API and the Gemini API (generateContent,
// streamGenerateContent), serving the replies of one Script in order to all
// four and recording every request.
//
// It is a product feature, not a test double of wfb's own packages: a dry run
// of a bench (`provider: {mock: FILE}`), `wfb mock serve` and `wfb session
// --mock-script` use it, and the offline tests drive the real session path
// through it so that the only thing not real is what the model says.
//
// A script file is read strictly (internal/strictyaml): an unknown field is an
// error, and every problem is reported at once with its file, line and field.
//
// The exchanges a metered attempt recorded become a script that replays
// them (RecordScript, one reply each by RecordReply): `wfb mock record`.
//
// This package imports nothing of wfb but internal leaves.
package provider
