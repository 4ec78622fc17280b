#!/bin/bash
# A whole Linux boot, traced and decoded: trixie's riscv64 kernel boots
# under Debian's OpenSBI on virt with every hart traced from reset
# (rvtrace=on, the PIB sink streaming to a file) to a busybox initramfs
# that runs a few commands and powers off.  The kernel text and the boot
# ROM are saved from guest memory at power-off (scripts/qemu-dump-at-
# exit.py), because Linux patches its own text while it boots; the
# decoder reads them with the firmware ELF and prints its summary.
#
#   scripts/linux-trace.sh [--smp N] [--no-baseline] [--ntrace]
#                          [--features N]
#
# --no-baseline skips the untraced run that the slowdown is measured
# against.  --features sets trTeInstFeatures at reset (the encoder's
# inst-features property: 254 = every E-trace optimisation).  The
# packages come from scripts/fetch-trixie.sh (nothing is installed);
# everything else goes to build/linux-trace/: trace.bin,
# the memory dumps, console.log, summary.txt (the decoder's summary and
# its time and memory) and report.txt (the figures docs/rvtrace.rst
# gives).
set -euo pipefail

. "$(dirname "$0")/lib.sh"

smp=2 baseline=1 format=etrace features=0
while [ $# -gt 0 ]; do
    case "$1" in
    --smp) smp=$2; shift 2 ;;
    --no-baseline) baseline=0; shift ;;
    --ntrace) format=ntrace; shift ;;
    --features) features=$2; shift 2 ;;
    *) die "usage: $0 [--smp N] [--no-baseline] [--ntrace] [--features N]" ;;
    esac
done

qemu=$RVPA_QEMU/build/qemu-system-riscv64
decode=$RVPA_BUILD/rvtrace-decode
[ -x "$qemu" ] && [ -x "$decode" ] || die "build first (scripts/bootstrap.sh)"
work=$RVPA_BUILD/linux-trace
fetch=$RVPA_ROOT/scripts/fetch-trixie.sh
mkdir -p "$work"

opensbi=$("$fetch" opensbi)
fw=$opensbi/usr/lib/riscv64-linux-gnu/opensbi/generic
kernel_pkg=$("$fetch" --deps --only 'linux-image-[0-9].*' \
             linux-image-riscv64:riscv64)
kernel=$(ls "$kernel_pkg"/boot/vmlinu[xz]-* | head -1)

# The initramfs: busybox, a few commands, power off.
root=$work/root
rm -rf "$root"
"$fetch" --into "$root" busybox-static:riscv64 >/dev/null
rm -rf "$root"/usr/share
for d in bin sbin; do
    [ -e "$root/$d" ] || ln -s "usr/$d" "$root/$d"
done
mkdir -p "$root"/{proc,sys,dev}
cat > "$root/init" <<'EOF'
#!/usr/bin/busybox sh
/usr/bin/busybox --install -s /usr/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
if grep -q rvpa.kallsyms /proc/cmdline; then
    echo "== kallsyms"; cat /proc/kallsyms; echo "== end"; poweroff -f
fi
echo "== linux-trace guest: $(uname -r), $(grep -c ^processor /proc/cpuinfo) harts"
i=0; while [ $i -lt 2000 ]; do i=$((i + 1)); done
ls /sys/bus/platform/devices | grep -c . >/dev/null
echo "== linux-trace guest: done"
poweroff -f
EOF
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initrd.gz"

# The kernel Image's header: image_size (bytes 16-23) covers text, data
# and bss; OpenSBI's fw_dynamic starts it at 0x80200000, and with no
# KASLR in Debian's build it runs at 0xffffffff80000000.
kernel_size=$(od -An -t u8 -j 16 -N 8 "$kernel" | tr -d ' ')
kernel_pa=0x80200000 kernel_va=0xffffffff80000000
rom_pa=0x1000 rom_size=0xf000

args=(-M virt -m 1G -smp "$smp" -cpu rv64 -display none -monitor none
      -serial "file:$work/console.log" -bios "$fw/fw_dynamic.bin"
      -kernel "$kernel" -initrd "$work/initrd.gz"
      -append "console=ttyS0 rdinit=/init quiet")
tr_args=(-M virt,rvtrace=on,rvtrace-chardev=tr
         -chardev "file,id=tr,path=$work/trace.bin")
[ $format = etrace ] || tr_args+=(-global riscv-trace-encoder.format=ntrace)
tr_args+=(-global "riscv-trace-encoder.inst-features=$features")

# The kernel's symbols, from an untraced boot of the same kernel (the
# addresses do not change: no KASLR).
if [ ! -s "$work/kallsyms.txt" ] || [ "$kernel" -nt "$work/kallsyms.txt" ]; then
    timeout 600 "$qemu" "${args[@]:0:${#args[@]}-2}" \
        -append "console=ttyS0 rdinit=/init quiet rvpa.kallsyms"
    sed -n '/^== kallsyms/,/^== end/{/^[0-9a-f]\{16\} /p}' \
        "$work/console.log" | tr -d '\r' > "$work/kallsyms.txt"
    grep -q ' __init_end$' "$work/kallsyms.txt" ||
        die "no kernel symbols from the guest (see $work/console.log)"
fi

now() { date +%s.%N; }
base_s=
if [ $baseline = 1 ]; then
    t0=$(now)
    timeout 1800 "$qemu" "${args[@]}"
    base_s=$(echo "$(now) - $t0" | bc)
    info "untraced boot: ${base_s} s"
fi
rm -f "$work/trace.bin"
t0=$(now)
timeout 3600 "$RVPA_ROOT/scripts/qemu-dump-at-exit.py" \
    --dump "$kernel_pa:$kernel_size:$work/kernel.bin" \
    --dump "$rom_pa:$rom_size:$work/rom.bin" \
    -- "$qemu" "${args[@]}" "${tr_args[@]}"
traced_s=$(echo "$(now) - $t0" | bc)
grep -q '^== linux-trace guest: done' "$work/console.log" ||
    die "the guest did not finish (see $work/console.log)"
info "traced boot: ${traced_s} s, trace $(du -h "$work/trace.bin" | cut -f1)"

src_bits=0
while [ $((1 << src_bits)) -lt "$smp" ]; do src_bits=$((src_bits + 1)); done
# Init text (and the early position-independent code beside it) is freed
# at the end of the boot: the dump holds what reused it, the Image what
# ran there.
python3 - "$work/kallsyms.txt" "$kernel" "$work/kernel.bin" \
    "$work/kernel-text.bin" $kernel_va <<'PY'
import sys
syms, image, dump, out, va = sys.argv[1:]
addr = {}
for line in open(syms):
    f = line.split()
    if len(f) >= 3:
        addr[f[2]] = int(f[0], 16)
begin = addr['__init_begin'] - int(va, 0)
end = addr['__init_end'] - int(va, 0)
text = bytearray(open(dump, 'rb').read())
text[begin:end] = open(image, 'rb').read()[begin:end]
open(out, 'wb').write(text)
PY
dec=("$decode" --format "$format" --src-bits "$src_bits" -k -s
     -e "$fw/fw_dynamic.elf@0x80000000" --symbols "$work/kallsyms.txt"
     -r "$work/kernel-text.bin@$kernel_pa"
     -r "$work/kernel-text.bin@$kernel_va" -r "$work/rom.bin@$rom_pa")
set +e
/usr/bin/time -f '# decoder: %e s, %M KiB' "${dec[@]}" "$work/trace.bin" \
    > "$work/summary.txt" 2> "$work/decode-errors.txt"
rc=$?
set -e
grep '^# decoder' "$work/decode-errors.txt" >> "$work/summary.txt" || true

# Errors by message, and whether the function they follow had its text
# changed while the kernel ran (the Image and the dump differ there:
# alternatives, static keys, ftrace), which one snapshot cannot show.
errors_by_reason() {
    python3 - "$work/decode-errors.txt" "$kernel" "$work/kernel.bin" \
        $kernel_va <<'PY'
import collections, re, sys
errors, image, dump, va = sys.argv[1:]
va = int(va, 0)
image, dump = open(image, 'rb').read(), open(dump, 'rb').read()
count = collections.Counter()
for line in open(errors):
    m = re.match(r'rvtrace-decode: error: .*?packet \d+: (.*?)'
                 r'(?: \(after (0x[0-9a-f]+)(?: <(.*)\+0x([0-9a-f]+)>)?\))?$',
                 line.strip())
    if not m:
        continue
    where = 'elsewhere'
    if m.group(3):
        start = int(m.group(2), 16) - int(m.group(4), 16)
        off = (start - va if start >= va else start - 0x80200000)
        if 0 <= off < len(dump):
            end = min(off + 4096, len(dump), len(image))
            if image[off:end] != dump[off:end]:
                where = 'in text changed at run time'
    count[(m.group(1), where)] += 1
for (msg, where), n in count.most_common():
    print('  %6d  %s (%s)' % (n, msg, where))
PY
}
{
    echo "linux-trace: $(basename "$kernel"), -smp $smp, $format"
    [ -z "$base_s" ] || echo "untraced boot   ${base_s} s"
    echo "traced boot     ${traced_s} s"
    [ -z "$base_s" ] ||
        echo "slowdown        $(echo "scale=2; $traced_s / $base_s" | bc)x"
    echo "trace bytes     $(stat -c %s "$work/trace.bin")"
    echo "decoder status  $rc"
    echo "errors by message:"
    errors_by_reason
    cat "$work/summary.txt"
} > "$work/report.txt"
cat "$work/report.txt"
