#!/bin/bash
# The trace encoder's threads under ThreadSanitizer.  Builds QEMU with
# --enable-tsan in a directory of its own (scripts/build-qemu.sh --tsan),
# runs guests that keep the encoding threads, the sinks and the PMU busy
# while the main loop's timers and a second hart run beside them, and
# fails on any ThreadSanitizer report with a frame of the project's own
# code in one of its conflicting stacks (data races: the two accesses;
# other reports: every stack but a thread's creation).  QEMU's own
# reports (TCG's TB lookup and chaining, mip between the timer and the
# hart) are counted and listed, not failed on.  Guests must also end well.
#
#   scripts/test-tsan.sh [BUILD_DIR]        (default build/qemu-tsan)
#
# The test 'tsan' of the e2e suite runs it.  Not run: a hart polling
# another's registers (e2e-smp2-poll's guest): every MMIO read leaves the
# TB with siglongjmp, which TSan does not follow, and its stack depot
# overflows after a while.
set -euo pipefail

. "$(dirname "$0")/lib.sh"

dir=${1:-$RVPA_BUILD/qemu-tsan}
RVPA_QEMU_BUILD=$dir "$RVPA_ROOT/scripts/build-qemu.sh" --tsan >/dev/null
qemu=$dir/qemu-system-riscv64
work_elf=$RVPA_BUILD/tests-tcg/bench-workloads-rv64.elf
smp_elf=$RVPA_BUILD/tests-e2e/e2e-smp-rv64.elf
[ -f "$work_elf" ] && [ -f "$smp_elf" ] ||
    die "build the guests first (meson compile -C $RVPA_BUILD)"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

pmu=rv64,sscofpmf=on,sspesa=on,ssplcofi=on,smcsrind=on,sscsrind=on
pmu=$pmu,pdis=on,ctr=on
# name | -smp | -cpu | -append | more QEMU arguments
runs=(
    "etrace-all|1|rv64|work=os iters=300 trace=254|"
    "etrace-pmu|1|$pmu|work=os iters=200 trace=254 record=draft pmu=2 pdis=1000|"
    "ntrace-htm|1|rv64|work=os iters=300 trace=200 ntrace=6|"
    "ntrace-btm|1|rv64|work=os iters=200 trace=0 ntrace=3|"
    "data|1|rv64|work=coremark iters=40 trace=0 data=1|"
    "pib|1|rv64|work=os iters=300 trace=0 sink=pib|-chardev file,id=tr,path=$out/pib.bin"
    "smp2-ram|2|rv64|trace=252|-semihosting-config enable=on,target=native"
    "smp2-pib|2|rv64||-chardev file,id=tr,path=$out/smp.bin"
)
for r in "${runs[@]}"; do
    IFS='|' read -r name smp cpu append extra <<<"$r"
    machine=virt,rvtrace=on elf=$work_elf
    [[ "$extra" != *id=tr* ]] || machine=$machine,rvtrace-chardev=tr
    [ "$smp" = 1 ] || elf=$smp_elf
    read -r -a more <<<"$extra"
    mkdir -p "$out/$name"
    res=$(cd "$out/$name" &&
          TSAN_OPTIONS="halt_on_error=0 exitcode=0 log_path=$out/$name/tsan" \
          "$qemu" -M "$machine" -bios none -display none -monitor none \
              -serial stdio -cpu "$cpu" -smp "$smp" -kernel "$elf" "${more[@]}" \
              ${append:+-append "$append"} 2>&1) ||
        die "$name: QEMU failed: $(tail -5 <<<"$res")"
    # the workloads' own checks, or each hart's result (e2e_smp.c)
    if [ "$smp" = 1 ]; then
        grep -q '^PASS: .* 0 failed' <<<"$res" || die "$name: $(tail -3 <<<"$res")"
    else
        [ "$(grep -c '^e2e-smp: hart [01] result' <<<"$res")" = 2 ] ||
            die "$name: $(tail -3 <<<"$res")"
    fi
    info "$name: guest done, $(cat "$out/$name"/tsan.* 2>/dev/null |
                                grep -c '^WARNING: ThreadSanitizer' || true) reports"
done

/usr/bin/python3 - "$out" <<'PY'
import collections, glob, os, re, sys

OURS = re.compile(r'hw/riscv/(riscv_trace|codec/)|target/riscv/(trace_ingress|'
                  r'trace_data|pmu_events|ctr|pdis|insn_class)')
ACCESS = re.compile(r'^  (Previous )?(atomic )?(read|write)', re.I)
theirs = collections.Counter()
ours = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], '*', 'tsan.*'))):
    run = os.path.basename(os.path.dirname(path))
    for report in open(path).read().split('WARNING: ThreadSanitizer: ')[1:]:
        kind = report.split(' (', 1)[0]
        stacks, frames = [], None
        for line in report.splitlines():
            if line.startswith('  ') and not line.startswith('    '):
                frames = []
                stacks.append((line.strip(), frames))
            elif (frames is not None and re.match(r'\s+#\d+ ', line) and
                  not (frames and frames[-1][0] == 'cpu_exec_setjmp')):
                # (TSan does not unwind siglongjmp: what it lists below
                # cpu_exec_setjmp is stale, frames the jump left)
                frames.append(line.split()[1:3])
        if kind == 'data race':
            stacks = [s for s in stacks if ACCESS.match('  ' + s[0])]
        else:
            stacks = [s for s in stacks if 'created by' not in s[0]]
        if any(OURS.search(f[1]) for _, fr in stacks for f in fr if len(f) > 1):
            ours.append('%s: %s\n%s' % (run, kind, report))
        else:
            top = ' / '.join(fr[0][0] for _, fr in stacks[:2] if fr)
            theirs['%s: %s' % (kind, top)] += 1
for k, n in theirs.most_common():
    print('QEMU: %3d x %s' % (n, k))
for r in ours:
    print('\nPROJECT CODE IN A REPORT, %s' % r[:4000])
print('%d reports of QEMU\'s own code, %d with the project\'s' %
      (sum(theirs.values()), len(ours)))
sys.exit(1 if ours else 0)
PY
