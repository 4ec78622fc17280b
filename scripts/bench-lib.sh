# Statistics shared by the benchmark scripts (sourced, not run).

# The median of a space-separated list of numbers.
median() {
    tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -n |
        awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# Paired runs: each round runs every configuration back to back, so the
# ratio of a configuration to the baseline in the same round cancels slow
# drifts of a shared machine; the figure is the median of those ratios.
# $1 and $2: the configuration's and the baseline's times, round by round.
paired_ratio() {
    local -a cfg base
    read -r -a cfg <<<"$1"
    read -r -a base <<<"$2"
    for i in "${!cfg[@]}"; do
        awk -v a="${cfg[$i]}" -v b="${base[$i]}" 'BEGIN { print a / b }'
    done | sort -g |
        awk '{ v[NR] = $1 } END { printf "%.3fx", v[int((NR + 1) / 2)] }'
}

# The entries of the space-separated list $1 at the 0-based positions
# listed in $2: the rounds of a paired_ratio() to keep.
pick_rounds() {
    local -a v out=()
    local i
    read -r -a v <<<"$1"
    for i in $2; do
        out+=("${v[$i]}")
    done
    echo "${out[*]}"
}

# Whether a round was calm: the cross-core round trips measured before
# and after it ($1 and $2, in ns, or "?") were both at most $3 ns.
calm_round() {
    awk -v a="$1" -v b="$2" -v max="$3" 'BEGIN {
        exit !(a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && a <= max && b <= max)
    }'
}

# Noise on a shared machine only ever adds time: the ratio of the fastest
# run of a configuration to the fastest run of the baseline estimates the
# cost itself.  $1 and $2 as for paired_ratio().
best_ratio() {
    awk -v a="$(tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | head -1)" \
        -v b="$(tr ' ' '\n' <<<"$2" | sed '/^$/d' | sort -g | head -1)" \
        'BEGIN { printf "%.3fx", a / b }'
}

# The host's steal time (/proc/stat, field 8 of "cpu") and all time so
# far, in jiffies: "steal total".
cpu_steal() {
    awk '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; print $9, t }' \
        /proc/stat
}

# The share of CPU time the host took between two cpu_steal readings: on a
# shared virtual machine the ratios of two-thread runs mean little beyond
# a few percent.
steal_share() {
    awk -v a="$1" -v b="$2" 'BEGIN {
        split(a, x, " "); split(b, y, " ")
        printf "%.1f%%", (y[2] > x[2] ? 100 * (y[1] - x[1]) / (y[2] - x[2]) : 0)
    }'
}

# The round trip of a cache line between CPUs 0 and 1, in ns
# (scripts/cross-core.c, built on first use), or "?" where there is no
# second CPU or no compiler.  The hart and its encoding thread hand every
# record over through such lines: two-thread ratios move with it.
cross_core_ns() {
    local src=$RVPA_ROOT/scripts/cross-core.c bin=$RVPA_BUILD/bench/cross-core

    if [ "$(nproc)" -lt 2 ]; then
        echo "?"
        return
    fi
    if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
        mkdir -p "${bin%/*}"
        cc -O2 -pthread -o "$bin" "$src" 2>/dev/null || { echo "?"; return; }
    fi
    timeout 60 "$bin" 2>/dev/null || echo "?"
}

# The host instructions a callgrind output file counted (its total).
callgrind_total() {
    sed -n 's/^\(summary\|totals\): *\([0-9]*\).*/\2/p' "$1" | head -n 1
}

# The arguments of a benchmark timed in rounds: [ROUNDS [ITERATIONS]], or
# --insns [ITERATIONS] (host instructions under callgrind).  Sets insns
# (0 or 1), rounds and iters; $1..$3 are the defaults of ROUNDS,
# ITERATIONS and ITERATIONS with --insns, then the script's arguments.
bench_options() {
    local def_rounds=$1 def_iters=$2 def_insns_iters=$3

    shift 3
    insns=0
    if [ "${1:-}" = --insns ]; then
        insns=1
        shift
        command -v valgrind >/dev/null || die "--insns needs valgrind"
        rounds=1
        iters=${1:-$def_insns_iters}
    else
        rounds=${1:-$def_rounds}
        iters=${2:-$def_iters}
    fi
}
