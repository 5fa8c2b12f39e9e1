#!/bin/bash
# Seeds fuzz/corpus/<target>/ from the repository's own inputs: the scenarios of sims/, each
# sweep of sims/sweeps/ joined to its base scenario by a line `---` (the sweep_grid target's
# input format), and the JSON examples of assign in seeds/assign_json/.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p corpus/scenario_toml corpus/sweep_grid corpus/assign_json
cp ../sims/*.toml ../sims/examples/*.toml corpus/scenario_toml/
for sweep in ../sims/sweeps/*.toml; do
  base=$(sed -n 's/^base = "\(.*\)"/\1/p' "$sweep")
  { cat "$sweep"; printf '\n---\n'; cat "../sims/sweeps/$base"; } > "corpus/sweep_grid/$(basename "$sweep")"
done
cp seeds/assign_json/*.json corpus/assign_json/
