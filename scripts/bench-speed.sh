#!/usr/bin/env bash
# bench-speed.sh: speed as users feel it (issue 13). Every figure is a whole
# process or a Go benchmark, measured in THIS run, each the median of REPS
# runs taken in alternation with its reference, and printed as a ratio
# beside its target:
#
#   - `wfb session --agent claude` (when WFB_CLAUDE_BIN names the pinned
#     CLI) under each backend vs `claude -p` alone against the same mock;
#   - `wfb session --mock-script ... --review` under host-unsafe, bwrap and
#     landlock vs the stand-in agent alone against a running mock (under a
#     sandbox, plus that sandbox's bare start: bwrap running /bin/true, or
#     wfb's landlock launcher running /bin/true);
#   - sweep throughput (`wfb run`, N = 1 and 2 workers, host-unsafe) vs the
#     stand-in agent alone run N-way parallel against one running mock;
#   - store inserts, one attempt per transaction and 100 per transaction,
#     vs raw prepared modernc inserts of the same rows into the same file
#     (store/bench_raw_test.go);
#   - `wfb diff` and `wfb report` over ROWS generated rows (or the file DB
#     names): peak RSS, and wall and CPU time vs wfb built from the git
#     revision BASE, their outputs checked byte for byte.
#
#   scripts/bench-speed.sh            # everything, REPS=5, ROWS=1000000
#   REPS=7 CELLS=20 ROWS=200000 ONLY=session,agents,sweep,store,rss scripts/bench-speed.sh
#   ONLY=rss DB=/tmp/big.db BASE=main scripts/bench-speed.sh
#
# A shared or loaded machine slows wfb and its reference alike: the ratios
# are what count, not the absolute times. Needs go, bwrap, GNU time.
set -euo pipefail

reps=${REPS:-5}
cells=${CELLS:-12}
rows=${ROWS:-1000000}
only=${ONLY:-session,agents,sweep,store,rss}
cd "$(dirname "$0")/.."
repo=$PWD
work=$(mktemp -d)
mockpid=""
hellopid=""
cleanup() {
	[[ -n $mockpid ]] && kill "$mockpid" 2>/dev/null || true
	[[ -n $hellopid ]] && kill "$hellopid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

for tool in go /usr/bin/time awk; do
	command -v "$tool" >/dev/null || { echo "bench-speed: $tool not found" >&2; exit 2; }
done

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
echo "medians of $reps, each taken alternating with its reference; on a shared, loaded machine the RATIOS are what count."
echo
go build -o "$work/wfb" ./cmd/wfb
wfb=$work/wfb

# now_ms prints a monotonic-enough wall clock in milliseconds.
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# timed VAR CMD... runs CMD (output discarded) and appends its wall ms to
# the array VAR. A failing CMD stops the script with its output.
timed() {
	local -n acc=$1
	shift
	local t0 t1
	t0=$(now_ms)
	"$@" >"$work/out" 2>&1 || { echo "bench-speed: failed: $*" >&2; cat "$work/out" >&2; exit 1; }
	t1=$(now_ms)
	acc+=($((t1 - t0)))
}

# median prints the median of its arguments.
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# row WHAT WFB REFERENCE RATIO TARGET: one line of the summary table;
# TARGET is "<= x" or ">= x".
rows_out=()
row() {
	local met
	met=$(awk -v r="$4" -v t="$5" 'BEGIN { split(t, p, " "); if (p[1] == "<=") print (r <= p[2] ? "met" : "NOT met"); else print (r >= p[2] ? "met" : "NOT met") }')
	rows_out+=("$(printf '| %s | %s | %s | %s | %s | %s |' "$1" "$2" "$3" "$4" "$5" "$met")")
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# The stand-in agent alone, as a session runs it, against the mock at $url.
review_prompt() { echo "Review auth.go for security and correctness problems. Write your review as JSON to $1"; }
agent_alone() {
	local dir=$1
	rm -rf "$dir" && mkdir -p "$dir/art" && cp -r "$repo/examples/_workspaces/auth" "$dir/ws"
	(cd "$dir/ws" && ANTHROPIC_BASE_URL=$url ANTHROPIC_API_KEY=offline "$wfb" mock agent -p --output-format stream-json --verbose \
		--permission-mode acceptEdits --add-dir "$dir/art" --no-session-persistence "$(review_prompt "$dir/art/review.json")" </dev/null)
}

start_mock() {
	"$wfb" mock serve --script "$repo/examples/replies/review.yaml" >"$work/mock.url" 2>"$work/mock.log" &
	mockpid=$!
	for _ in $(seq 100); do
		url=$(head -n1 "$work/mock.url" 2>/dev/null || true)
		[[ -n $url ]] && return
		sleep 0.05
	done
	echo "bench-speed: the mock provider did not start" >&2
	exit 1
}

bench_session() {
	local -a hu=() bw=() ll=() alone=() bw0=() ll0=()
	local i
	for ((i = 0; i < reps; i++)); do
		timed alone agent_alone "$work/alone"
		timed hu "$wfb" session --workspace "$repo/examples/_workspaces/auth" --prompt "Review auth.go." --review \
			--mock-script "$repo/examples/replies/review.yaml" --sandbox host-unsafe --db "$work/session.db" --format tsv
		timed bw "$wfb" session --workspace "$repo/examples/_workspaces/auth" --prompt "Review auth.go." --review \
			--mock-script "$repo/examples/replies/review.yaml" --sandbox bwrap --db "$work/session.db" --format tsv
		timed bw0 bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --die-with-parent /bin/true
		timed ll "$wfb" session --workspace "$repo/examples/_workspaces/auth" --prompt "Review auth.go." --review \
			--mock-script "$repo/examples/replies/review.yaml" --sandbox landlock --db "$work/session.db" --format tsv
		timed ll0 "$wfb" sandbox-exec --ro / --rw "$work" -- /bin/true
	done
	local a h b b0 l l0
	a=$(median "${alone[@]}") h=$(median "${hu[@]}") b=$(median "${bw[@]}") b0=$(median "${bw0[@]}")
	l=$(median "${ll[@]}") l0=$(median "${ll0[@]}")
	# wfb's own cost, the session minus its reference, moves less with the
	# machine's speed than the ratio does: printed beside it.
	row "wfb session --review, host-unsafe" "$h ms (+$(awk -v x="$h" -v y="$a" 'BEGIN { print x - y }') ms)" "stand-in alone $a ms" "$(ratio "$h" "$a")" "<= 1.3"
	row "wfb session --review, bwrap" "$b ms (+$(awk -v x="$b" -v y="$a" -v z="$b0" 'BEGIN { print x - y - z }') ms)" "stand-in alone $a + bare bwrap $b0 ms" "$(ratio "$b" "$(awk -v y="$a" -v z="$b0" 'BEGIN { print y + z }')")" "<= 1.6"
	row "wfb session --review, landlock" "$l ms (+$(awk -v x="$l" -v y="$a" -v z="$l0" 'BEGIN { print x - y - z }') ms)" "stand-in alone $a + bare launcher $l0 ms" "$(ratio "$l" "$(awk -v y="$a" -v z="$l0" 'BEGIN { print y + z }')")" "<= 1.6"
}

# A real agent CLI, when the pinned one is installed (WFB_CLAUDE_BIN, as
# .ci/install-agents.sh prints it): `wfb session --agent claude` against
# the mock vs the same CLI alone against the same mock, in the environment
# wfb gives it (a private HOME, no side traffic), one prompt, one reply.
# Every wfb session writes the same results file, as a user's do: the
# first of each sandbox (a warm-up, not counted) asks the binary its
# version, the rest find it in the file (agent_binaries). Target: <= 1.1x,
# under a sandbox against the CLI alone plus that sandbox's bare start.
write_hello_script() {
	cat >"$work/hello.yaml" <<EOF
default:
  text: "hello"
  usage: {input_tokens: 120, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
EOF
}
claude_alone() {
	local dir=$1
	rm -rf "$dir" && mkdir -p "$dir/home" "$dir/tmp" "$dir/ws"
	(cd "$dir/ws" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$dir/home" TMPDIR="$dir/tmp" LANG=C.UTF-8 \
		ANTHROPIC_BASE_URL="$hello_url" ANTHROPIC_API_KEY=offline CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
		CLAUDE_CODE_MAX_RETRIES=2 API_TIMEOUT_MS=120000 \
		"$WFB_CLAUDE_BIN" -p --output-format stream-json --verbose hi </dev/null)
}
claude_session() {
	ANTHROPIC_API_KEY=offline "$wfb" session --agent claude --agent-bin "$WFB_CLAUDE_BIN" --base-url "$hello_url" \
		--workspace "$work/cws" --prompt hi --sandbox "$1" --db "$work/agents.db" --format tsv
}
bench_agents() {
	if [[ -z ${WFB_CLAUDE_BIN:-} || ! -x ${WFB_CLAUDE_BIN:-} ]]; then
		echo "bench-speed: agents: skipped, WFB_CLAUDE_BIN is not set (eval \"\$(bash .ci/install-agents.sh)\")" >&2
		return
	fi
	write_hello_script
	"$wfb" mock serve --script "$work/hello.yaml" >"$work/hello.url" 2>"$work/hello.log" &
	hellopid=$!
	hello_url=""
	for _ in $(seq 100); do
		hello_url=$(head -n1 "$work/hello.url" 2>/dev/null || true)
		[[ -n $hello_url ]] && break
		sleep 0.05
	done
	[[ -n $hello_url ]] || { echo "bench-speed: the hello mock did not start" >&2; exit 1; }
	mkdir -p "$work/cws"
	local sb
	for sb in host-unsafe bwrap landlock; do
		claude_session "$sb" >/dev/null 2>&1 || true # the warm-up: asks the version once
	done
	local -a alone=() hu=() bw=() ll=() bw0=() ll0=()
	local i
	for ((i = 0; i < reps; i++)); do
		timed alone claude_alone "$work/calone"
		timed hu claude_session host-unsafe
		timed bw claude_session bwrap
		timed bw0 bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --die-with-parent /bin/true
		timed ll claude_session landlock
		timed ll0 "$wfb" sandbox-exec --ro / --rw "$work" -- /bin/true
	done
	kill "$hellopid" 2>/dev/null || true
	local a h b b0 l l0
	a=$(median "${alone[@]}") h=$(median "${hu[@]}") b=$(median "${bw[@]}") b0=$(median "${bw0[@]}")
	l=$(median "${ll[@]}") l0=$(median "${ll0[@]}")
	row "wfb session --agent claude, host-unsafe" "$h ms (+$(awk -v x="$h" -v y="$a" 'BEGIN { print x - y }') ms)" "claude -p alone $a ms" "$(ratio "$h" "$a")" "<= 1.1"
	row "wfb session --agent claude, bwrap" "$b ms" "claude -p alone $a + bare bwrap $b0 ms" "$(ratio "$b" "$(awk -v y="$a" -v z="$b0" 'BEGIN { print y + z }')")" "<= 1.1"
	row "wfb session --agent claude, landlock" "$l ms" "claude -p alone $a + bare launcher $l0 ms" "$(ratio "$l" "$(awk -v y="$a" -v z="$l0" 'BEGIN { print y + z }')")" "<= 1.1"
}

# The sweep: one review task, CELLS repetitions, one stand-in arm.
write_sweep_bench() {
	mkdir -p "$work/sweep"
	cat >"$work/sweep/bench.yaml" <<EOF
runs: $cells
timeout: 2m
sandbox: host-unsafe
provider: {mock: $repo/examples/replies/review.yaml}
tasks:
  - id: review-auth
    class: review
    workspace: $repo/examples/_workspaces/auth
    prompt: "Review auth.go for security and correctness problems."
    review: true
arms:
  - {id: a, agent: stand-in}
EOF
}

# alone_parallel N: CELLS stand-in agents, N at a time.
alone_parallel() {
	local n=$1
	seq "$cells" | xargs -P "$n" -I{} bash -c 'agent_alone "$0/par-$1"' "$work" {}
}

bench_sweep() {
	write_sweep_bench
	export -f agent_alone review_prompt
	export url wfb repo
	local n
	for n in 1 2; do
		local -a sw=() par=()
		local i
		for ((i = 0; i < reps; i++)); do
			timed par alone_parallel "$n"
			rm -f "$work/sweep.db"*
			timed sw "$wfb" run "$work/sweep/bench.yaml" --workers "$n" --db "$work/sweep.db" --format tsv
		done
		local s p
		s=$(median "${sw[@]}") p=$(median "${par[@]}")
		row "sweep, $cells review cells, $n worker(s), host-unsafe" \
			"$(awk -v c="$cells" -v t="$s" 'BEGIN { printf "%.1f cells/s", c * 1000 / t }')" \
			"stand-in alone $n-way $(awk -v c="$cells" -v t="$p" 'BEGIN { printf "%.1f cells/s", c * 1000 / t }')" \
			"$(ratio "$p" "$s")" ">= 0.7"
	done
}

# The store's inserts vs raw prepared inserts: Go benchmarks, alternated.
bench_store() {
	go test -c -o "$work/store.test" ./store
	local pair
	for pair in "InsertResult RawInsert one attempt per transaction" "InsertResultBatched RawInsertBatched 100 attempts per transaction"; do
		read -r mine raw what <<<"$pair"
		local -a m=() r=()
		local i
		for ((i = 0; i < reps; i++)); do
			r+=("$(cd store && "$work/store.test" -test.run '^$' -test.bench "^Benchmark$raw\$" -test.benchtime 2000x | awk '/^Benchmark/ { print $3 }')")
			m+=("$(cd store && "$work/store.test" -test.run '^$' -test.bench "^Benchmark$mine\$" -test.benchtime 2000x | awk '/^Benchmark/ { print $3 }')")
		done
		local mm rr
		mm=$(median "${m[@]}") rr=$(median "${r[@]}")
		row "store inserts, $what" "$(awk -v x="$mm" 'BEGIN { printf "%.0f µs/row", x / 1000 }')" \
			"raw prepared modernc $(awk -v x="$rr" 'BEGIN { printf "%.0f µs/row", x / 1000 }')" "$(ratio "$rr" "$mm")" ">= 0.75"
	done
}

# wfb diff and wfb report over ROWS rows (or the file DB names): peak RSS
# (target <= 150 MiB), and wall and CPU time against wfb built from BASE (a
# git revision; default cf05ecf, main before issue 13's memory work),
# alternating run by run (target: no worse). RSS does not depend on the
# machine's load; time does, CPU time (user + sys) less than wall time.
bench_rss() {
	local db=${DB:-}
	if [[ -z $db ]]; then
		echo "generating $rows rows ..."
		db=$work/big.db
		go run ./report/internal/genresults -rows "$rows" -out "$db"
	fi
	cat "$db" >/dev/null
	local base=${BASE:-cf05ecf}
	mkdir "$work/base"
	git archive "$base" | tar -x -C "$work/base"
	(cd "$work/base" && go build -o "$work/wfb-base" ./cmd/wfb)
	local cmd
	for cmd in diff report; do
		local -a s=() c=() k=() bs=() bc=()
		local i secs user sys kib
		for ((i = 0; i < reps; i++)); do
			for bin in "$wfb" "$work/wfb-base"; do
				/usr/bin/time -f '%e %U %S %M' -o "$work/time" "$bin" "$cmd" --db "$db" day-1 day-2 --format csv >"$work/out.$i" 2>"$work/err" ||
					{ cat "$work/err" >&2; exit 1; }
				read -r secs user sys kib <"$work/time"
				if [[ $bin == "$wfb" ]]; then
					s+=("$secs") c+=("$(awk -v u="$user" -v y="$sys" 'BEGIN { print u + y }')") k+=("$kib")
					mv "$work/out.$i" "$work/out.wfb"
				else
					bs+=("$secs") bc+=("$(awk -v u="$user" -v y="$sys" 'BEGIN { print u + y }')")
					cmp -s "$work/out.$i" "$work/out.wfb" || { echo "bench-speed: wfb $cmd prints other output than $base's" >&2; exit 1; }
				fi
			done
		done
		local mk ms mc mbs mbc
		mk=$(median "${k[@]}") ms=$(median "${s[@]}") mc=$(median "${c[@]}") mbs=$(median "${bs[@]}") mbc=$(median "${bc[@]}")
		row "wfb $cmd, $rows rows: peak RSS" "$(awk -v k="$mk" 'BEGIN { printf "%.0f MiB", k / 1024 }')" "goal 150 MiB" \
			"$(awk -v k="$mk" 'BEGIN { printf "%.2f", k / 1024 / 150 }')" "<= 1"
		row "wfb $cmd, $rows rows: wall time" "$ms s" "$base $mbs s" "$(ratio "$ms" "$mbs")" "<= 1"
		row "wfb $cmd, $rows rows: CPU time" "$mc s" "$base $mbc s" "$(ratio "$mc" "$mbc")" "<= 1"
	done
}

if [[ $only == *session* || $only == *sweep* ]]; then start_mock; fi
[[ $only == *session* ]] && bench_session
[[ $only == *agents* ]] && bench_agents
[[ $only == *sweep* ]] && bench_sweep
[[ $only == *store* ]] && bench_store
[[ $only == *rss* ]] && bench_rss

echo
echo "| what | wfb | reference | ratio | target | |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows_out[@]}"
echo
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
