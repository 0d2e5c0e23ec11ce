#!/usr/bin/env bash
# bench-report.sh: time and peak memory of `wfb report` and `wfb diff` over a
# generated results file of ROWS attempts (default 1,000,000), next to the
# sqlite3 CLI running the same aggregate query, plus the Go benchmarks of the
# builders. Prints the figures and the ratios.
#
#   scripts/bench-report.sh [ROWS]
#
# Needs go, awk, /usr/bin/time (GNU time) and sqlite3 on PATH.
set -euo pipefail

rows=${1:-1000000}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db="$work/bench.db"

for tool in go sqlite3 /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "bench-report: $tool not found" >&2; exit 2; }
done

echo "building wfb and generating $rows rows into $db ..."
go build -o "$work/wfb" ./cmd/wfb
go run ./report/internal/genresults -rows "$rows" -out "$db"
# Warm the page cache so that every contender reads from memory.
cat "$db" >/dev/null

# The aggregate wfb report computes, in SQL: per arm, attempts, ok, each
# error kind, measured cost n and sum, and the median of every usage metric
# over its measured values. The generated file has no retries, so every cell
# has one attempt and this per-attempt query counts what report's per-cell
# tabulation counts. (SQLite has no quartile function; report also computes
# quartiles and both rates, so this is the smaller job.)
read -r -d '' aggregate <<'SQL' || true
WITH counts AS (
  SELECT arm, count(*) AS attempted, sum(ok) AS ok,
         sum(error_kind = 'verify-failed') AS verify_failed, sum(error_kind = 'timeout') AS timeout,
         sum(error_kind = 'provider-error') AS provider_error, sum(error_kind = 'sandbox-refused') AS sandbox_refused,
         sum(error_kind = 'session-error') AS session_error,
         count(cost_usd) AS cost_n, sum(cost_usd) AS cost_sum
  FROM results GROUP BY arm
),
v AS (
  SELECT arm, 'input_tokens' AS m, input_tokens AS x FROM results WHERE input_tokens IS NOT NULL
  UNION ALL SELECT arm, 'output_tokens', output_tokens FROM results WHERE output_tokens IS NOT NULL
  UNION ALL SELECT arm, 'cache_read', cache_read_input_tokens FROM results WHERE cache_read_input_tokens IS NOT NULL
  UNION ALL SELECT arm, 'cache_write', cache_creation_input_tokens FROM results WHERE cache_creation_input_tokens IS NOT NULL
  UNION ALL SELECT arm, 'cost_usd', cost_usd FROM results WHERE cost_usd IS NOT NULL
  UNION ALL SELECT arm, 'num_turns', num_turns FROM results WHERE num_turns IS NOT NULL
  UNION ALL SELECT arm, 'duration_ms', duration_ms FROM results WHERE duration_ms IS NOT NULL
),
ranked AS (
  SELECT arm, m, x, row_number() OVER (PARTITION BY arm, m ORDER BY x) AS rn, count(*) OVER (PARTITION BY arm, m) AS n FROM v
),
medians AS (
  SELECT arm, m, avg(x) AS median FROM ranked WHERE rn IN ((n + 1) / 2, (n + 2) / 2) GROUP BY arm, m
)
SELECT c.*, m.m, m.median FROM counts c JOIN medians m USING (arm) ORDER BY c.arm, m.m;
SQL

# measure NAME CMD... runs CMD three times and keeps the fastest wall time
# and the peak resident set size of that run.
declare -A secs kib
measure() {
	local name=$1; shift
	local best="" best_kib=""
	for _ in 1 2 3; do
		/usr/bin/time -f '%e %M' -o "$work/time" "$@" >"$work/out" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
		read -r s k <"$work/time"
		if [[ -z $best ]] || awk -v a="$s" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$s best_kib=$k; fi
	done
	secs[$name]=$best kib[$name]=$best_kib
}

measure "wfb report (1M rows, csv)" "$work/wfb" report --db "$db" day-1 day-2 --format csv
measure "wfb diff day-1 day-2 (csv)" "$work/wfb" diff --db "$db" day-1 day-2 --format csv
measure "sqlite3 CLI, same aggregate" sqlite3 "$db" "$aggregate"
measure "sqlite3 CLI, counts only" sqlite3 "$db" "SELECT arm, count(*), sum(ok), count(cost_usd), sum(cost_usd) FROM results GROUP BY arm"

base="sqlite3 CLI, same aggregate"
printf '\n%-32s %9s %10s %14s\n' "command" "wall s" "peak MiB" "× sqlite3 agg"
for name in "wfb report (1M rows, csv)" "wfb diff day-1 day-2 (csv)" "sqlite3 CLI, same aggregate" "sqlite3 CLI, counts only"; do
	awk -v n="$name" -v s="${secs[$name]}" -v k="${kib[$name]}" -v b="${secs[$base]}" \
		'BEGIN { printf "%-32s %9.2f %10.1f %14.2f\n", n, s, k / 1024, s / b }'
done

echo
echo "Go benchmarks (one iteration each; MB-peak-heap is the largest live heap seen while loading):"
WFB_BENCH_DB="$db" go test ./report -run '^$' -bench '1M$' -benchmem -benchtime 1x | grep -E '^Benchmark'
