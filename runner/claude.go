package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/wfbench/wfb/store"
)

// claudeOutput collects what matters from Claude Code's stdout (json or
// stream-json): the result events, and enough about the rest to explain a
// refusal.
type claudeOutput struct {
	jsonLines
	results    [][]byte // raw result events, copied
	apiRetries int
	// streamed is set by stream-json's system/init event: only a stream
	// shows api_retry events, so only then is their count a measurement.
	streamed bool
	// version is the CLI's version, probed before the session; when set it
	// is the row's agent_version (see recordVersion).
	version string
}

// line consumes one stdout line. It must not retain l.
func (o *claudeOutput) line(l []byte, truncated bool) {
	var head struct {
		Type    string `json:"type"`
		Subtype string `json:"subtype"`
	}
	l, ok := o.decode(l, truncated, &head)
	if !ok {
		return
	}
	switch {
	case head.Type == "result":
		o.results = append(o.results, bytes.Clone(l))
	case head.Type == "system" && head.Subtype == "api_retry":
		o.apiRetries++
	case head.Type == "system" && head.Subtype == "init":
		o.streamed = true
	}
}

// claudeResult is the result event, with usage and cost kept raw so that
// validation sees exactly what the agent printed.
type claudeResult struct {
	Type          string                     `json:"type"`
	Subtype       string                     `json:"subtype"`
	IsError       *bool                      `json:"is_error"`
	NumTurns      json.RawMessage            `json:"num_turns"`
	Result        *string                    `json:"result"`
	SessionID     string                     `json:"session_id"`
	TotalCostUSD  json.RawMessage            `json:"total_cost_usd"`
	Usage         map[string]json.RawMessage `json:"usage"`
	APIErrorState json.RawMessage            `json:"api_error_status"`
	Errors        []json.RawMessage          `json:"errors"`
	Denials       []json.RawMessage          `json:"permission_denials"`
	// ModelUsage is keyed by the model name the agent requested.
	ModelUsage map[string]map[string]json.RawMessage `json:"modelUsage"`
}

// modelUsageFields maps Claude Code's camelCase per-model usage keys to the
// four usage columns, in UsageFields order.
var modelUsageFields = []string{"inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens"}

// parseModelUsage validates modelUsage strictly: every model's four counts
// must be present non-negative integers, or no per-model row is recorded
// (the reasons are returned). costUSD is kept when it is a finite
// non-negative number, else it is NULL.
func parseModelUsage(mu map[string]map[string]json.RawMessage) ([]store.ModelUsage, []string) {
	models := make([]string, 0, len(mu))
	for m := range mu {
		models = append(models, m)
	}
	sort.Strings(models)
	var out []store.ModelUsage
	var problems []string
	for _, m := range models {
		fields := mu[m]
		vals, bad := parseCounts(fields, fmt.Sprintf("modelUsage[%q].", m), modelUsageFields)
		problems = append(problems, bad...)
		row := store.ModelUsage{
			Model:       m,
			InputTokens: &vals[0], OutputTokens: &vals[1],
			CacheReadInputTokens: &vals[2], CacheCreationInputTokens: &vals[3],
		}
		if cost, ok, _ := parseCost(fields["costUSD"]); ok {
			row.CostUSD = &cost
		}
		out = append(out, row)
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return out, nil
}

// UsageFields are the four usage fields a complete measurement carries. All
// must be present and non-negative integers, or the measurement is refused.
var UsageFields = []string{
	"input_tokens",
	"output_tokens",
	"cache_read_input_tokens",
	"cache_creation_input_tokens",
}

var wholeNumber = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)

// parseCount accepts a JSON value that is a non-negative integer written as
// one: not a float (1.5, 2e3, 2000.0), not a string, not a bool, not null.
func parseCount(raw json.RawMessage) (int64, error) {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "" || s == "null":
		return 0, fmt.Errorf("is null")
	case s == "true" || s == "false":
		return 0, fmt.Errorf("is a boolean (%s)", s)
	case strings.HasPrefix(s, `"`):
		return 0, fmt.Errorf("is a string (%s)", clip(s, 40))
	case strings.HasPrefix(s, "{") || strings.HasPrefix(s, "["):
		return 0, fmt.Errorf("is not a number (%s)", clip(s, 40))
	case strings.HasPrefix(s, "-"):
		return 0, fmt.Errorf("is negative (%s)", clip(s, 40))
	case !wholeNumber.MatchString(s):
		return 0, fmt.Errorf("is not a whole number (%s)", clip(s, 40))
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("is out of range (%s)", clip(s, 40))
	}
	return n, nil
}

// parseUsage validates the four usage fields. It returns them in
// UsageFields order, or the reasons the measurement is refused.
func parseUsage(usage map[string]json.RawMessage) ([4]int64, []string) {
	var vals [4]int64
	if usage == nil {
		return vals, []string{"usage is missing from the result"}
	}
	counts, problems := parseCounts(usage, "usage.", UsageFields)
	copy(vals[:], counts)
	return vals, problems
}

// parseCost accepts a finite non-negative number. Anything else is "not
// measured": ok is false and why says what was there.
func parseCost(raw json.RawMessage) (cost float64, ok bool, why string) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return 0, false, ""
	}
	if s[0] == '"' || s == "true" || s == "false" || s[0] == '{' || s[0] == '[' {
		return 0, false, fmt.Sprintf("total_cost_usd %s is not a number", clip(s, 40))
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false, fmt.Sprintf("total_cost_usd %s is not a finite number", clip(s, 40))
	}
	if v < 0 {
		return 0, false, fmt.Sprintf("total_cost_usd %s is negative", clip(s, 40))
	}
	return v, true, ""
}

// apiErrorText recognises the result text of a failure the provider caused:
// an error status ("API Error: 529 ..."), or no answer at all within
// API_TIMEOUT_MS ("Request timed out ...", which carries no status).
var apiErrorText = regexp.MustCompile(`(?i)^\s*(API Error|Request timed out)`)

// providerFailure says whether a failed result came from the model provider
// (an upstream 4xx/5xx the agent surfaced) rather than the agent itself.
func (r *claudeResult) providerFailure() bool {
	if s := strings.TrimSpace(string(r.APIErrorState)); s != "" && s != "null" {
		return true
	}
	return r.Result != nil && apiErrorText.MatchString(*r.Result)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// claudeCLIOutput is the real Claude Code's output: the strict parse of
// claudeOutput, plus what only the real CLI reports — per-model usage,
// permission denials, api_retry counts — and its version.
type claudeCLIOutput struct {
	*claudeOutput
	named string // the version the spec named, if any
}

func (o *claudeCLIOutput) interpret(row *store.Result, pr processResult) {
	o.claudeOutput.interpret(row, pr)
	o.claudeOutput.measureMore(row, o.named)
}

// measureMore records what the strict parse leaves out. It never turns a
// failed row into an ok one.
func (o *claudeOutput) measureMore(row *store.Result, named string) {
	recordVersion(row, o.version, named)
	if o.streamed {
		n := int64(o.apiRetries)
		row.APIRetries = &n
	}
	if row.InputTokens != nil {
		row.UsageSemantics = store.UsageAnthropic
		n := *row.InputTokens
		row.ReportedInputTokens = &n
	}
	if len(o.results) != 1 {
		return
	}
	var res claudeResult
	if json.Unmarshal(o.results[0], &res) != nil {
		return
	}
	if res.Denials != nil {
		n := int64(len(res.Denials))
		row.PermissionDenials = &n
	}
	if res.ModelUsage != nil {
		mu, problems := parseModelUsage(res.ModelUsage)
		if len(problems) > 0 {
			row.ErrorDetail = joinDetail(row.ErrorDetail, "per-model usage refused, not recorded: "+strings.Join(problems, "; "))
		}
		row.ModelUsage = mu
	}
}
