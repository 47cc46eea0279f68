#!/usr/bin/env bash
# scripts/queue-act.sh BIN HOSTS - act 3 of scripts/demo (and tests/queue-demo.zksh):
# a producer puts 30 jobs on a claim/ack queue, three consumers (A, B, C)
# work on them, and B is killed with SIGKILL in the middle of a job.  B
# acked nothing, so its claim goes with its session (after the session
# timeout) and another consumer gets the job again, with a larger delivery
# token.  Prints the consumers' lines and a summary; exits 1 if a job was
# lost or done twice, or nothing was redelivered.
set -euo pipefail
bin=$1 hosts=$2
jobs=${ZKL_DEMO_JOBS:-30} work_ms=${ZKL_DEMO_WORK_MS:-300}
session_ms=${ZKL_DEMO_SESSION_MS:-4000}
path=/zkl-demo/jobs-$$-$RANDOM
dir=$(mktemp -d "${TMPDIR:-/tmp}/zkl-queue-act.XXXXXX")
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
now_ms() { date +%s%3N; }

printf '\n==== act 3: a work queue, at-least-once (session timeout %s ms) ====\n' "$session_ms"
"$bin" "$hosts" "$path" produce "$jobs" | sed 's/^/    /'
for c in A B C; do
  # idle: a consumer stops once no job came for a session timeout and more
  "$bin" "$hosts" "$path" consume "$c" "$work_ms" "$session_ms" \
    "$((session_ms + 3000))" >"$dir/$c.log" 2>&1 &
  pids+=($!)
done
# B is killed once it is in the middle of its second job
deadline=$(($(now_ms) + 30000))
while [ "$(grep -c claimed "$dir/B.log" || true)" -lt 2 ]; do
  [ "$(now_ms)" -lt "$deadline" ] || { echo "B never got a second job"; exit 1; }
  sleep 0.02
done
sleep "$(awk -v ms="$work_ms" 'BEGIN { printf "%.3f", ms / 2000 }')"
victim=$(grep claimed "$dir/B.log" | tail -1 | awk '{print $3}')
printf '    >>> B is working on %s: SIGKILL (no ack, no goodbye)\n' "$victim"
kill -KILL "${pids[1]}"
wait "${pids[1]}" 2>/dev/null || true
t_kill=$(now_ms)
for i in 0 2; do wait "${pids[$i]}" || { echo "a consumer failed:"; cat "$dir"/*.log; exit 1; }; done
pids=()
cat "$dir/A.log" "$dir/B.log" "$dir/C.log" | grep -E 'claimed|done|lost' | sed 's/^/    /' |
  grep -E "$victim|B " || true
again=$(grep -h "claimed $victim " "$dir/A.log" "$dir/C.log" | head -1)
t_b=$(grep "claimed $victim " "$dir/B.log" | awk '{print $5}')
t_again=$(printf '%s\n' "$again" | awk '{print $5}')
done_lines=$(cat "$dir"/*.log | grep -c ' done ' || true)
unique=$(cat "$dir"/*.log | awk '$2 == "done" {print $3}' | sort -u | wc -l)
redelivered=$(cat "$dir"/*.log | awk '$2 == "claimed" {print $3}' | sort | uniq -d | wc -l)
lost=$((jobs - unique))
twice=$((done_lines - unique))
printf '\n    jobs put %d, done %d (by A %d, B %d, C %d), lost %d, done twice %d\n' \
  "$jobs" "$unique" "$(grep -c ' done ' "$dir/A.log" || true)" \
  "$(grep -c ' done ' "$dir/B.log" || true)" "$(grep -c ' done ' "$dir/C.log" || true)" \
  "$lost" "$twice"
printf '    redelivered %d: %s, B claimed it with token %s; after B died it came again: %s\n' \
  "$redelivered" "$victim" "$t_b" "${again:-never}"
[ "$lost" -eq 0 ] && [ "$twice" -eq 0 ] && [ "$redelivered" -ge 1 ] &&
  [ -n "$t_again" ] && [ "$t_again" -gt "$t_b" ] || { echo "    act 3 FAILED"; exit 1; }
printf '    every job done once; the killed job was redone with a larger token (%s > %s)\n' \
  "$t_again" "$t_b"
: "$t_kill"
