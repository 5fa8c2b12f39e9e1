# Sourced by the gate scripts: the cuts of the 1,000-member reference (sims/bench/), one file
# each, the same definition every time a gate runs.
#   reference_cut SRC NAME DURATION RESTART_AT|none OUT_DIR [INTERVAL]
# writes OUT_DIR/NAME.toml: SRC renamed NAME, its duration DURATION, and its rolling restart
# moved from minute 10 to RESTART_AT, or dropped with every other event (none). INTERVAL
# replaces the restart's 2 s between members: a rolling restart must end before the run does
# (issue 28; `validate` rejects one cut short), so a cut gives its 1,000 steps less time.
reference_cut() {
  local out="$5/$2.toml"
  sed -e "s/^duration = \"1h\"/duration = \"$3\"/" -e "0,/^name = .*/s//name = \"$2\"/" "$1" > "$out"
  if [[ "$4" == none ]]; then
    sed -i '/^\[\[event\]\]/,$d' "$out"
  else
    sed -i "s/^at = \"10m\"/at = \"$4\"/" "$out"
    if [[ -n "${6:-}" ]]; then
      sed -i "s/^interval = \"2s\"/interval = \"$6\"/" "$out"
    fi
  fi
}
