#!/bin/bash
# Sorts a fuzz corpus by how the binary answers each input: `valid` (exit 0), `refused`
# (exit 2, a message on stderr) or `bad` (anything else: a panic, a signal, another code).
# Usage: fuzz/classify.sh BINARY scenario_toml|assign_json
set -uo pipefail
cd "$(dirname "$0")"
binary=$1
target=$2
declare -A count=([valid]=0 [refused]=0 [bad]=0)
for input in corpus/"$target"/*; do
  case $target in
    scenario_toml) cp "$input" /tmp/fuzz-classify.toml; args=(validate /tmp/fuzz-classify.toml) ;;
    assign_json) args=(assign "$input") ;;
  esac
  timeout 60 "$binary" "${args[@]}" > /dev/null 2>&1
  case $? in
    0) count[valid]=$((count[valid] + 1)) ;;
    2) count[refused]=$((count[refused] + 1)) ;;
    *) count[bad]=$((count[bad] + 1)); echo "bad: $input" ;;
  esac
done
echo "$target: $(ls corpus/"$target" | wc -l) inputs: ${count[valid]} valid, ${count[refused]} refused with a message, ${count[bad]} bad"
