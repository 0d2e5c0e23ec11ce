package wfb

// Sandbox backend names, as a bench file's sandbox: and --sandbox take them
// and results.sandbox records them, and SandboxAuto, which picks the
// strongest backend whose preflight passes. Package sandbox implements
// them; a bench file is checked against these names without it.
const (
	SandboxHostUnsafe = "host-unsafe"
	SandboxBwrap      = "bwrap"
	SandboxLandlock   = "landlock"
	SandboxAuto       = "auto"
)

// SandboxStrength lists the backends from the strongest to the weakest:
// the order auto tries them in and doctor reports them in.
var SandboxStrength = []string{SandboxBwrap, SandboxLandlock, SandboxHostUnsafe}
