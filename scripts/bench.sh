#!/bin/bash
# The project's benchmark: what each feature costs, and how this QEMU
# compares with the one a user would otherwise run (Debian's own
# qemu-system-riscv64 10.0.2, scripts/fetch-debian-qemu.sh).  Results:
# docs/performance.rst.
#
#   scripts/bench.sh [--rounds N] [--scale S] [--calm NS] [--out DIR]
#   scripts/bench.sh --insns [--out DIR]
#
# 1. Speed.  The workload guest (tests-tcg/bench/workloads.c: a
#    CoreMark-like mix, a sort, a call-heavy recursion, a branch-heavy
#    loop, and the CoreMark-like kernels in S and U mode under a 1 kHz
#    timer interrupt), each run for about 0.2 s (times S) in every
#    configuration below, in N interleaved rounds (default 7; the order
#    rotates from round to round).  Each run of a configuration is paired
#    with a run of "off" (this build, every feature off) right before it,
#    or after it in every other round; the figure is the median of the
#    per-round ratios of the two, for the guest's own time (mtime around
#    the workload) and for the whole process.
#    "off"'s own row, against its pair, shows the noise.  Every run's
#    checksum must be the checksum of "off": a wrong result never passes
#    as fast.
# 2. Deterministic counts: instructions of each workload (-icount
#    shift=0), trace bytes and bits per instruction of each trace mode,
#    and the decoder's throughput on a trace of the CoreMark-like mix.
# --insns: host instructions (valgrind --tool=callgrind) of each
#    configuration on the CoreMark-like mix, relative to "off": figures
#    that do not move with a busy host (slow: about 15 minutes).
#
# Output: a table on stdout, DIR/results.csv, DIR/bench.png (gnuplot:
# slowdown per configuration, bits per instruction per trace mode),
# DIR/performance-table.rst and performance-bits.rst for
# docs/performance.rst.  DIR defaults to
# build/bench.  The host's steal time is printed: on a shared virtual
# machine, figures of two-thread configurations (tracing) move with it.
# So does the round trip of a cache line between the two cores, measured
# before the first round and after each: the rounds it kept at most NS
# (--calm, default 250; 0: none) both before and after also get a table
# of their own, when there are at least 3 of them and not all.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench-lib.sh"

rounds=7 scale=1 out=$RVPA_BUILD/bench insns=0 calm_ns=250
while [ $# -gt 0 ]; do
    case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --scale) scale=$2; shift 2 ;;
    --calm) calm_ns=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --insns) insns=1; shift ;;
    *) die "usage: $0 [--rounds N] [--scale S] [--calm NS] [--insns]" \
           "[--out DIR]" ;;
    esac
done

qemu=$RVPA_QEMU/build/qemu-system-riscv64
elf=$RVPA_BUILD/tests-tcg/bench-workloads-rv64.elf
decoder=$RVPA_BUILD/rvtrace-decode
[ -x "$qemu" ] && [ -f "$elf" ] && [ -x "$decoder" ] ||
    die "build first (scripts/run-tests.sh, or meson compile -C build)"
debian=$("$RVPA_ROOT/scripts/fetch-debian-qemu.sh")
debian_version=$("$debian" --version | sed -n '1s/.*version \([^ ]*\).*/\1/p')
mkdir -p "$out"

# workload:iterations for about 0.2 s with every feature off
workloads=(coremark:18000 sort:7200 recursion:9000 branchy:4500 os:15000)

pmu=rv64,sscofpmf=on,sspesa=on,ssplcofi=on
pdis=rv64,sscofpmf=on,smcsrind=on,sscsrind=on,pdis=on
ratified=rv64,smctr=on,ssctr=on,smcsrind=on,sscsrind=on
everything=rv64,h=on,ctr=on,sscofpmf=on,sspesa=on,ssplcofi=on,smcsrind=on
everything=$everything,sscsrind=on,pdis=on
all_modes=254       # trTeInstFeatures: every optimisation (docs/rvtrace.rst)
nt_all=456          # N-trace: implicit return (full compare) and repeat

# name | binary | machine | -cpu | guest arguments | more QEMU arguments |
# goal (docs/performance.rst)
configs=(
    "Debian QEMU $debian_version|debian|virt|rv64|||-"
    "off|rvpa|virt|rv64|||-"
    "ctr=on, unused|rvpa|virt|rv64,ctr=on|||1.01x"
    "smctr=on, unused|rvpa|virt|$ratified|||1.01x"
    "sspesa=on, unused|rvpa|virt|$pmu|||1.01x"
    "pdis=on, unused|rvpa|virt|$pdis|||1.01x"
    "rvtrace=on, idle|rvpa|virt,rvtrace=on|rv64|||1.01x"
    "CTR draft, recording all|rvpa|virt|rv64,ctr=on|record=draft||1.2x"
    "CTR ratified, recording all|rvpa|virt|$ratified|record=ratified||1.2x"
    "Sspesa, INST.RET every 100k|rvpa|virt|$pmu|pmu=2||1.1x"
    "PDIS every 100k, memory|rvpa|virt|$pdis|pdis=100000||1.1x"
    "E-trace default, RAM sink|rvpa|virt,rvtrace=on|rv64|trace=0||1.25x"
    "E-trace full address|rvpa|virt,rvtrace=on|rv64|trace=1||1.25x"
    "E-trace implicit return|rvpa|virt,rvtrace=on|rv64|trace=200||1.5x"
    "E-trace branch prediction|rvpa|virt,rvtrace=on|rv64|trace=16||1.5x"
    "E-trace jump target cache|rvpa|virt,rvtrace=on|rv64|trace=32||1.5x"
    "E-trace all modes, RAM sink|rvpa|virt,rvtrace=on|rv64|trace=$all_modes||1.5x"
    "E-trace default, chardev|rvpa|virt,rvtrace=on,rvtrace-chardev=tr|rv64|trace=0 sink=pib|-chardev null,id=tr|1.25x"
    "E-trace 2.0 layout, all|rvpa|virt,rvtrace=on|rv64|trace=$all_modes|-global riscv-trace-encoder.arch=1|1.5x"
    "E-trace default + data accesses|rvpa|virt,rvtrace=on|rv64|trace=0 data=1||2x"
    "N-trace BTM, RAM sink|rvpa|virt,rvtrace=on|rv64|trace=0 ntrace=3||1.25x"
    "N-trace HTM, RAM sink|rvpa|virt,rvtrace=on|rv64|trace=0 ntrace=6||1.25x"
    "N-trace HTM, stack, repeat|rvpa|virt,rvtrace=on|rv64|trace=$nt_all ntrace=6||1.5x"
    "N-trace HTM, chardev|rvpa|virt,rvtrace=on,rvtrace-chardev=tr|rv64|trace=0 ntrace=6 sink=pib|-chardev null,id=tr|1.25x"
    "everything on|rvpa|virt,rvtrace=on|$everything|record=draft pmu=2 pdis=100000 trace=$all_modes||-"
)

# the "off" run each configuration's run is paired with
off_config=$(printf '%s\n' "${configs[@]}" |
             sed -n 's/^off|\(\([^|]*|\)\{4\}[^|]*\)|.*/\1/p')
[ -n "$off_config" ] || die "no configuration named off"

binary_of() {
    [ "$1" = debian ] && echo "$debian" || echo "$qemu"
}

# One run: "ticks nanoseconds checksum" (guest time, process time).
run_one() {
    local bin=$1 machine=$2 cpu=$3 args=$4 extra=$5 t0 t1 res
    local -a more=()
    [ -z "$extra" ] || read -r -a more <<<"$extra"
    t0=$(date +%s%N)
    res=$("$(binary_of "$bin")" -M "$machine" -bios none -display none \
          -monitor none -serial stdio -cpu "$cpu" -kernel "$elf" "${more[@]}" \
          -append "$args") || die "guest failed ($bin $machine $cpu, $args): $res"
    t1=$(date +%s%N)
    sed -n 's/^work: .* ticks \([0-9]*\) .* result \([0-9]*\).*/\1 '"$((t1 - t0))"' \2/p' \
        <<<"$res" | grep . || die "no result ($cpu, $args): $res"
}

# --------------------------------------------------------- --insns

if [ $insns = 1 ]; then
    command -v valgrind >/dev/null || die "--insns needs valgrind"
    count() {
        local f
        f=$(mktemp)
        IFS='|' read -r _ bin machine cpu args extra _ <<<"$1"
        local -a more=()
        [ -z "$extra" ] || read -r -a more <<<"$extra"
        valgrind --tool=callgrind --trace-children=yes \
            --callgrind-out-file="$f" \
            "$(binary_of "$bin")" -M "$machine" -bios none -display none \
            -monitor none -serial null -cpu "$cpu" -kernel "$elf" \
            "${more[@]}" -append "work=coremark iters=$2 $args" \
            >/dev/null 2>&1 || die "valgrind failed ($1)"
        callgrind_total "$f"
        rm -f "$f"
    }
    echo "Host instructions of 1500 iterations of the CoreMark-like mix"
    echo "(minus those of 1), relative to 'off' (callgrind)"
    base=
    for c in "${configs[@]}"; do
        name=${c%%|*}
        many=$(count "$c" 1500)
        one=$(count "$c" 1)
        n=$((many - one))
        [ "$name" != off ] || base=$n
        echo "$name|$n"
    done > "$out/insns.txt"
    while IFS='|' read -r name n; do
        printf '%-34s %8s\n' "$name" \
            "$(awk -v a="$n" -v b="$base" 'BEGIN { printf "%.3fx", a / b }')"
    done < "$out/insns.txt"
    exit 0
fi

# ----------------------------------------------------------- 1. speed

declare -A ticks nanos sums gratio cratio
steal0=$(cpu_steal)
cross0=$(cross_core_ns)
crosses=()      # after each round: the host's state moves within minutes
n=${#configs[@]}
for ((r = 0; r < rounds; r++)); do
    for wl in "${workloads[@]}"; do
        w=${wl%%:*}
        iters=$(awk -v i="${wl#*:}" -v s="$scale" 'BEGIN { printf "%d", i * s }')
        for ((k = 0; k < n; k++)); do
            IFS='|' read -r name bin machine cpu args extra _ \
                <<<"${configs[(r + k) % n]}"
            # a pair: an "off" run and the configuration's, in turn first
            pair=("pair of $name|$off_config"
                  "$name|$bin|$machine|$cpu|$args|$extra")
            ((r % 2 == 0)) || pair=("${pair[1]}" "${pair[0]}")
            for run in "${pair[@]}"; do
                IFS='|' read -r rname bin machine cpu args extra <<<"$run"
                res=$(run_one "$bin" "$machine" "$cpu" \
                              "work=$w iters=$iters $args" "$extra")
                read -r t ns sum <<<"$res"
                ticks[$rname/$w]+="$t "
                nanos[$rname/$w]+="$ns "
                if [ -z "${sums[$w]:-}" ]; then
                    sums[$w]=$sum
                elif [ "${sums[$w]}" != "$sum" ]; then
                    die "$rname computes $w wrong: checksum $sum, not ${sums[$w]}"
                fi
            done
        done
    done
    crosses+=("$(cross_core_ns)")
    info "round $((r + 1)) of $rounds done" \
         "(cross-core round trip ${crosses[-1]} ns)"
done
steal=$(steal_share "$steal0" "$(cpu_steal)")
cross="$cross0 ns before, $(printf '%s\n' "${crosses[@]}" | sort -g |
    awk 'NR == 1 { lo = $1 } { hi = $1 }
         END { print lo == hi ? lo : lo "-" hi }') ns after the rounds"
# the calm rounds (0-based), whose round trips before and after were short
calm=() prev=$cross0
for r in "${!crosses[@]}"; do
    if calm_round "$prev" "${crosses[$r]}" "$calm_ns"; then
        calm+=("$r")
    fi
    prev=${crosses[$r]}
done
calm_table=false
[ "${#calm[@]}" -lt 3 ] || [ "${#calm[@]}" -eq "$rounds" ] || calm_table=true

csv=$out/results.csv
: > "$out/slowdown.dat"
echo "configuration,workload,guest_ratio,process_ratio,guest_ticks_median,goal,calm_guest_ratio" \
    > "$csv"
printf '%-34s' configuration
for wl in "${workloads[@]}"; do
    printf ' %10s' "${wl%%:*}"
done
printf ' %8s\n' goal
for c in "${configs[@]}"; do
    IFS='|' read -r name _ _ _ _ _ goal <<<"$c"
    printf '%-34s' "$name"
    for wl in "${workloads[@]}"; do
        w=${wl%%:*}
        g=$(paired_ratio "${ticks[$name/$w]}" "${ticks[pair of $name/$w]}")
        p=$(paired_ratio "${nanos[$name/$w]}" "${nanos[pair of $name/$w]}")
        gratio[$name/$w]=${g%x}
        cratio[$name/$w]=
        if $calm_table; then
            cratio[$name/$w]=$(paired_ratio \
                "$(pick_rounds "${ticks[$name/$w]}" "${calm[*]}")" \
                "$(pick_rounds "${ticks[pair of $name/$w]}" "${calm[*]}")")
            cratio[$name/$w]=${cratio[$name/$w]%x}
        fi
        printf ' %10s' "$g"
        echo "\"$name\",$w,${g%x},${p%x},$(median "${ticks[$name/$w]}"),$goal,${cratio[$name/$w]}" \
            >> "$csv"
    done
    printf ' %8s\n' "$goal"
    # the plot's bar: the geometric mean over the workloads
    for wl in "${workloads[@]}"; do
        echo "${gratio[$name/${wl%%:*}]}"
    done | awk -v n="$name" '{ s += log($1) } END {
        printf "\"%s\" %.4f\n", n, exp(s / NR) }' >> "$out/slowdown.dat"
done
echo "(median of $rounds per-round ratios of guest time (mtime) to the" \
     "'off' run paired with each;" \
     "whole-process ratios in $csv; host steal $steal; a cache line's" \
     "round trip between the cores $cross)"
calm_note="${#calm[@]} of $rounds rounds calm (a cache line's round trip"
calm_note+=" at most $calm_ns ns before and after)"
if $calm_table; then
    echo
    echo "The same, $calm_note:"
    printf '%-34s' configuration
    for wl in "${workloads[@]}"; do
        printf ' %10s' "${wl%%:*}"
    done
    echo
    for c in "${configs[@]}"; do
        IFS='|' read -r name _ <<<"$c"
        printf '%-34s' "$name"
        for wl in "${workloads[@]}"; do
            printf ' %10s' "${cratio[$name/${wl%%:*}]}x"
        done
        echo
    done
else
    echo "($calm_note: no table of their own)"
fi

# ----------------------------------------------- 2. deterministic counts

# Instructions and trace bytes under -icount shift=0 (minstret counts
# instructions): "insns bytes".
counted() {
    local machine=$1 args=$2 res
    shift 2
    res=$("$qemu" -M "$machine" -bios none -display none -monitor none \
          -serial stdio -cpu rv64 -kernel "$elf" -icount shift=0 "$@" \
          -append "$args") || die "guest failed ($args): $res"
    sed -n 's/^work: .* insns \([0-9]*\) .* bytes \([0-9]*\) .*/\1 \2/p' <<<"$res"
}

# N-trace without periodic sync, as the N-trace reference code's figures
modes=("default|0" "all modes|$all_modes" "full address|1"
       "implicit return|200" "branch prediction|16" "jump target cache|32"
       "N-trace BTM|0 ntrace=3 syncmode=0"
       "N-trace HTM|0 ntrace=6 syncmode=0"
       "N-trace HTM, stack|200 ntrace=6 syncmode=0"
       "N-trace HTM, stack, repeat|$nt_all ntrace=6 syncmode=0")
bits=$out/bits.csv
: > "$out/bits.dat"
echo "mode,workload,instructions,bytes,bits_per_instruction" > "$bits"
echo
printf '%-28s' "bits/instruction"
for wl in "${workloads[@]}"; do
    printf ' %10s' "${wl%%:*}"
done
echo
for m in "${modes[@]}"; do
    mname=${m%%|*} f=${m#*|}
    printf '%-28s' "$mname"
    sum=0
    for wl in "${workloads[@]}"; do
        w=${wl%%:*}
        iters=$(( ${wl#*:} / 12 ))
        res=$(counted virt,rvtrace=on \
                      "work=$w iters=$iters trace=$f bufsize=$((64 << 20))")
        read -r ni nb <<<"$res"
        b=$(awk -v b="$nb" -v i="$ni" 'BEGIN { printf "%.3f", 8 * b / i }')
        printf ' %10s' "$b"
        echo "\"$mname\",$w,$ni,$nb,$b" >> "$bits"
        sum=$(awk -v a="$sum" -v b="$b" 'BEGIN { print a + b }')
    done
    echo
    awk -v n="$mname" -v s="$sum" -v k="${#workloads[@]}" \
        'BEGIN { printf "\"%s\" %.4f\n", n, s / k }' >> "$out/bits.dat"
done
echo "(-icount shift=0; trace bytes in the RAM sink, a twelfth of the" \
     "iterations; N-trace without periodic sync)"

# The decoder on a whole run of the CoreMark-like mix captured through
# the chardev sink, with the boot ROM saved first (as scripts/demo.sh).
work=$out/decoder
mkdir -p "$work"
dargs=(-M virt,rvtrace=on,rvtrace-chardev=tr -bios none -display none
       -cpu rv64 -kernel "$elf" -serial none)
printf 'pmemsave 0x1000 0x100 "%s/rom.bin"\nquit\n' "$work" |
    "$qemu" "${dargs[@]}" -chardev null,id=tr -S -monitor stdio \
        -append "work=coremark" > /dev/null
echo
for m in "default|0" "all modes|$all_modes"; do
    mname=${m%%|*} f=${m#*|}
    "$qemu" "${dargs[@]}" -chardev file,id=tr,path="$work/trace.bin" \
        -monitor none -append "work=coremark iters=20000 trace=$f sink=pib"
    t0=$(date +%s%N)
    ninsns=$("$decoder" --summary --keep-going -e "$elf" \
             -r "$work/rom.bin@0x1000" "$work/trace.bin" |
             awk '/^instructions/ { print $2 }')
    t1=$(date +%s%N)
    awk -v n="$ninsns" -v ns="$((t1 - t0))" -v m="$mname" \
        -v b="$(stat -c %s "$work/trace.bin")" 'BEGIN {
        printf "decoder, %s: %d instructions, %d bytes, %.1f M instructions/s\n",
               m, n, b, n / (ns / 1e3) }' | tee -a "$out/decoder.txt"
done

# ------------------------------------------------------------- outputs

if command -v gnuplot >/dev/null; then
    gnuplot <<EOF
set terminal pngcairo size 1100,900 font ",10"
set output "$out/bench.png"
set multiplot layout 2,1
set style fill solid 0.6
set boxwidth 0.7
set yrange [0:*]
set xtics rotate by -35 noenhanced
set rmargin 12
set grid ytics
set title "Slowdown to 'off' (geometric mean of the workloads, guest time; $(date -u +%Y-%m-%d))"
plot "$out/slowdown.dat" using 2:xtic(1) with boxes notitle
set title "Trace bits per instruction (mean of the workloads)"
plot "$out/bits.dat" using 2:xtic(1) with boxes notitle
unset multiplot
EOF
    echo "plot: $out/bench.png"
else
    echo "(no gnuplot: scripts/install-deps.sh installs gnuplot-nox)"
fi

# A table of docs/performance.rst, of the ratios in the array named $1.
rst_table() {
    local -n ratios=$1
    local rule c wl name goal

    rule="=================================  $(printf '==========  %.0s' "${workloads[@]}")====="
    echo "$rule"
    printf '%-33s' configuration
    for wl in "${workloads[@]}"; do printf '  %-10s' "${wl%%:*}"; done
    printf '  goal\n'
    echo "$rule"
    for c in "${configs[@]}"; do
        IFS='|' read -r name _ _ _ _ _ goal <<<"$c"
        printf '%-33s' "$name"
        for wl in "${workloads[@]}"; do
            printf '  %-10s' "$(printf '%.2f' "${ratios[$name/${wl%%:*}]}")"
        done
        printf '  %s\n' "$goal"
    done
    echo "$rule"
}

{
    echo ".. table from scripts/bench.sh, $(date -u +%Y-%m-%d), $(nproc) cores," \
         "host steal $steal, cross-core round trip $cross"
    echo
    rst_table gratio
    if $calm_table; then
        echo
        echo ".. the same, $calm_note"
        echo
        rst_table cratio
    fi
} > "$out/performance-table.rst"
# The bits per instruction, as a table for docs/performance.rst.
{
    rule="============================  $(printf '==========  %.0s' "${workloads[@]}")"
    echo "Bits per instruction of each trace mode (\`\`-icount shift=0\`\`;"
    echo "N-trace without periodic sync):"
    echo
    echo "$rule"
    printf '%-28s' mode
    for wl in "${workloads[@]}"; do printf '  %-10s' "${wl%%:*}"; done
    echo
    echo "$rule"
    for m in "${modes[@]}"; do
        mname=${m%%|*}
        printf '%-28s' "$mname"
        for wl in "${workloads[@]}"; do
            # mode names hold commas: the mode is the quoted prefix
            printf '  %-10s' "$(awk -F, -v m="\"$mname\"," -v w="${wl%%:*}" \
                'index($0, m) == 1 && $(NF - 3) == w { print $NF }' "$bits")"
        done
        echo
    done
    echo "$rule"
} > "$out/performance-bits.rst"
echo "tables for docs/performance.rst: $out/performance-table.rst," \
     "$out/performance-bits.rst"
