#!/bin/bash
# Debian's Linux and perf on this QEMU: trixie's riscv64 kernel boots
# under Debian's OpenSBI on virt with Sscofpmf, Sspesa and Ssplcofi, in an
# initramfs of Debian's perf, its libraries and busybox (all trixie
# riscv64 packages, downloaded and extracted by scripts/fetch-trixie.sh,
# nothing installed).  The guest lists the PMU events, counts with
# perf stat (the raw event r100, INST.DEC.SPEC, and the SBI general
# events), samples with perf record -e branches, and powers off.
#
#   scripts/linux-perf.sh [--no-run]    (--no-run: only build the guest)
#
# The first run downloads about 200 MB into the shared cache.  The
# guest's console goes to stdout and to build/linux-perf/console.log;
# docs/pmu.rst records what it showed.
set -euo pipefail

. "$(dirname "$0")/lib.sh"

qemu=$RVPA_QEMU/build/qemu-system-riscv64
[ -x "$qemu" ] || die "build first (scripts/bootstrap.sh)"
work=$RVPA_BUILD/linux-perf
fetch=$RVPA_ROOT/scripts/fetch-trixie.sh
mkdir -p "$work"

opensbi=$("$fetch" opensbi)
kernel_pkg=$("$fetch" --deps --only 'linux-image-[0-9].*' \
             linux-image-riscv64:riscv64)
kernel=$(ls "$kernel_pkg"/boot/vmlinu[xz]-* | head -1)

# The initramfs: perf and the libraries it links (not the Perl and
# Python it can embed for scripting), and busybox for the shell.
root=$work/root
rm -rf "$root"
"$fetch" --deps --into "$root" \
    --exclude 'perl|perl-base|python3.*|libpython3-stdlib|libpython3\.13-(minimal|stdlib)' \
    linux-perf:riscv64 busybox-static:riscv64 >/dev/null
rm -rf "$root"/usr/share/{doc,man,locale,info}
for d in bin sbin lib; do
    [ -e "$root/$d" ] || ln -s "usr/$d" "$root/$d"
done
perf=usr/bin/perf
mkdir -p "$root"/{proc,sys,dev,tmp}
cat > "$root/init" <<EOF
#!/usr/bin/busybox sh
/usr/bin/busybox --install -s /usr/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
export PATH=/usr/bin:/usr/sbin PAGER=cat TERM=dumb
run() { echo "# \$*"; "\$@" 2>&1; }
echo "== linux-perf guest: \$(uname -r)"
run grep -m1 '^isa' /proc/cpuinfo
run sh -c 'dmesg | grep -i -E "sbi|pmu|perf"'
run ls /sys/bus/event_source/devices/cpu/events /sys/bus/event_source/devices/cpu/format
run /$perf --no-pager list hw
run /$perf stat -e r100 -e instructions -e branches -e cycles -- sh -c 'i=0; while [ \$i -lt 20000 ]; do i=\$((i + 1)); done'
run /$perf record -e branches -c 20000 -o /tmp/perf.data -- sh -c 'i=0; while [ \$i -lt 200000 ]; do i=\$((i + 1)); done'
run sh -c '/$perf report -i /tmp/perf.data --stdio --sort dso,sym | head -24'
run /$perf record -e r100 -c 50000 -o /tmp/perf2.data -- sh -c 'i=0; while [ \$i -lt 100000 ]; do i=\$((i + 1)); done'
run sh -c '/$perf report -i /tmp/perf2.data --stdio --sort dso,sym | head -24'
echo "== linux-perf guest: done"
poweroff -f
EOF
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initrd.gz"
info "kernel $(basename "$kernel"), initramfs $(du -h "$work/initrd.gz" | cut -f1)"
[ "${1:-}" != --no-run ] || exit 0

cpu=rv64,sscofpmf=on,sspesa=on,ssplcofi=on,smcdeleg=on,ssccfg=on
cpu+=,smcsrind=on,sscsrind=on
echo "\$ qemu-system-riscv64 -M virt -m 1G -cpu $cpu -bios fw_dynamic.bin" \
     "-kernel $(basename "$kernel") -initrd initrd.gz"
timeout 900 "$qemu" -M virt -m 1G -smp 1 -cpu "$cpu" -display none \
    -monitor none -serial stdio \
    -bios "$opensbi/usr/lib/riscv64-linux-gnu/opensbi/generic/fw_dynamic.bin" \
    -kernel "$kernel" -initrd "$work/initrd.gz" \
    -append "console=ttyS0 rdinit=/init quiet" | tee "$work/console.log"
grep -q '^== linux-perf guest: done' "$work/console.log" ||
    die "the guest did not finish (see $work/console.log)"
