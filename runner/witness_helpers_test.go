package runner

import (
	"fmt"
	"io"
	"os"
	"slices"
)

// Agents of the helper process (see helperProcess) that stand in for a
// real CLI's behaviour the stand-in agent does not have: one that prints
// usage without asking any provider.

// unwitnessedResult is a Claude Code result whose usage (2000/300/7000/1000,
// $0.0123) no provider was asked for.
const unwitnessedResult = `{"type":"result","subtype":"success","is_error":false,"num_turns":1,"session_id":"s1","result":"done","total_cost_usd":0.0123,` +
	`"usage":{"input_tokens":2000,"output_tokens":300,"cache_read_input_tokens":7000,"cache_creation_input_tokens":1000}}`

// agentHelper runs the helper agent named by mode, if it is one.
func agentHelper(mode string) (int, bool) {
	if slices.Contains(os.Args[1:], "--version") {
		fmt.Println("1.0.0")
		return 0, true
	}
	switch mode {
	case "usage-without-request":
		// Prints usage and asks no provider: the meter sees nothing.
		io.Copy(io.Discard, os.Stdin)
		fmt.Println(unwitnessedResult)
		return 0, true
	}
	return 0, false
}
