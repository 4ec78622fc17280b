#!/bin/bash
# Decode this QEMU's E-trace with the trace task group's reference flow
# (riscv-non-isa/riscv-trace-spec, referenceFlow/scripts: the Python
# models of the decoder algorithm and of the data trace decoder) and
# compare what they rebuild with what rvtrace-decode rebuilds, which the
# e2e suite checks against QEMU's own logs.
#
#   scripts/etrace-interop.sh RISCV_TRACE_SPEC
#
# RISCV_TRACE_SPEC is a checkout (or bare git directory) of
# riscv-non-isa/riscv-trace-spec; nothing of it is copied into the
# project: its scripts are run from a temporary directory.  Each case runs
# an e2e guest (tests-e2e/run-e2e.py --keep) with the 2.0 packet layout
# (riscv-trace-encoder.arch=1: the models read thaddr and the 2.0
# support packet), then:
#
# - instructions: decoder_model.py decodes the instruction packets; the
#   addresses it reports must be rvtrace-decode's, in order;
# - data accesses (data=M cases): data_decoder_model.py decodes the data
#   packets and the support packets; type, address, size and value of
#   each access must be rvtrace-decode's.
#
# What the models need that the spec leaves to the implementation, done
# here and nowhere else (docs/decoder.rst, "The reference flow"):
# - the header's flow bits: the models take them as a message type (2
#   instruction, 3 data); this encoder sends instruction packets with 0;
# - padding: the RAM sink pads with zero bytes, which the models do not
#   skip;
# - the options of the support packet: their meaning is implementation
#   defined, and the models use their own bits (ioptions: 0 implicit
#   return, 1 implicit exception, 2 full address, 3 jump target cache,
#   4 branch prediction; doptions: 0 no address, 1 no data, 2 full
#   addresses, 3 full data), so each support packet is rewritten with
#   this encoder's options in the models' bits;
# - data compression starts again after every format 3 packet here, and
#   only at a support packet in the model: the data stream for the model
#   repeats the support packet after each format 3 packet;
# - the static configuration (iaddress_width_p 64 or 32, ...: the
#   discovery registers say it), and an objdump whose data in .text the
#   models' ELF reader accepts (".word" as unimp, ".2byte" and ".short" as
#   c.unimp).
#
# The models implement the baseline algorithm only, and the cases use
# what they implement.  Not compared, as the models can not read them:
# implicit return, branch prediction, jump target cache and sequentially
# inferable jumps (not implemented); implicit exception (the model reads
# the trap packet's address whatever the mode); the data trace's
# per-packet choice of compression (the model applies one compression
# for all packets, from the options); atomics (the model's atomic packet has a 2-bit
# size, an op_len of size bits and XOR as subtype 5, not the draft's
# tables 7.6-7.9, and the draft's data_len of size bits, which this
# encoder widens): the data cases compare the accesses before the first
# atomic.  Needs a built project (build/, qemu/build).
set -euo pipefail

. "$(dirname "$0")/lib.sh"

[ $# = 1 ] || die "usage: $0 RISCV_TRACE_SPEC (a checkout or git directory)"
repo=$1
work=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT

# The models from the task group's sources, as they are.
copy_repo_folder "$repo" referenceFlow/scripts decoder_model.py "$work/ref" ||
    die "no referenceFlow/scripts in $repo"

objdump=${RVTRACE_OBJDUMP:-riscv64-unknown-elf-objdump}
mkdir -p "$work/toolchain/bin"
cat > "$work/toolchain/bin/riscv64-unknown-elf-objdump" <<EOF
#!/bin/sh
"$(command -v "$objdump")" "\$@" |
    sed -e 's/\t\.word\t.*/\tunimp/' -e 's/\t\.2byte\t.*/\tc.unimp/' \
        -e 's/\t\.short\t.*/\tc.unimp/' -e '/\t\.[48]\?byte\t/d'
EOF
chmod +x "$work/toolchain/bin/riscv64-unknown-elf-objdump"
export RISCV_TOOLCHAIN=$work/toolchain

memlog=$RVPA_BUILD/tests-e2e/libmemlog.so
decoder=$RVPA_BUILD/rvtrace-decode
# the 2.0 packet layout, on both sides
arch2=(--qemu-arg=-global --qemu-arg=riscv-trace-encoder.arch=1
       --decode-arg=--arch --decode-arg=2.0)
elfs=$RVPA_BUILD/tests-e2e

# The stream, split for the models: instruction packets (flow 2) with the
# support packets rewritten, and data packets (flow 3) with the same
# support packets.
cat > "$work/split.py" <<'EOF'
import sys

src, inst_out, data_out = sys.argv[1:4]
raw = open(src, 'rb').read()
inst, data = bytearray(), bytearray()

# this encoder's options bits (hw-riscv-trace/codec/include/etrace.h)
FULL_ADDRESS, IMPLICIT_EXCEPTION = 1 << 0, 1 << 1
IR_SHIFT, BPRED, JTC = 3, 1 << 5, 1 << 6
DATA, NO_ADDRESS, NO_VALUE, DATA_FULL = 1 << 7, 1 << 8, 1 << 9, 1 << 10


def support(payload):
    """Our support packet (2.0 layout) in the models' option bits."""
    bits = len(payload) * 8
    v = int.from_bytes(payload, 'little')
    if v >> (bits - 1):
        v |= -1 << bits                 # sign-based compression
    head = v & 0xff                     # format .. qual_status
    opts = (v >> 8) & 0xfff
    denable, dloss = (v >> 20) & 1, (v >> 21) & 1
    iopts = ((((opts >> IR_SHIFT) & 3) != 0) << 0 |
             bool(opts & IMPLICIT_EXCEPTION) << 1 |
             bool(opts & FULL_ADDRESS) << 2 |
             bool(opts & JTC) << 3 | bool(opts & BPRED) << 4)
    dopts = (bool(opts & NO_ADDRESS) << 0 | bool(opts & NO_VALUE) << 1 |
             bool(opts & DATA_FULL) << 2 | bool(opts & DATA_FULL) << 3)
    out = head | iopts << 8 | denable << 13 | dloss << 14 | dopts << 15
    return out.to_bytes(3, 'little')


i = 0
last_support = b''
while i < len(raw):
    h = raw[i]
    if h == 0:                          # padding
        i += 1
        continue
    assert not h & 0x80, 'extended header at %d' % i
    n, flow = h & 0x1f, (h >> 5) & 3
    payload = raw[i + 1:i + 1 + n]
    i += 1 + n
    if flow == 3:
        data += bytes([0x60 | n]) + payload
    elif payload[0] & 0xf == 0xf:       # format 3 subformat 3
        p = support(payload)
        last_support = bytes([0x40 | len(p)]) + p
        inst += last_support
        data += last_support
    else:
        inst += bytes([0x40 | n]) + payload
        if payload[0] & 3 == 3:
            # format 3 restarts the data compression (etrace-data.h), a
            # support packet the model's
            data += last_support
open(inst_out, 'wb').write(inst)
open(data_out, 'wb').write(data)
EOF

cat > "$work/compare.py" <<'EOF'
import csv
import json
import sys

kind, ref_path, ours_path = sys.argv[1:4]
if kind == 'inst':
    ref = [int(l, 16) for l in open(ref_path)
           if l.strip() and not l.startswith('#')]
    ours = [int(l, 16) for l in open(ours_path) if l.startswith('0x')]
    what = 'instructions'
else:
    # DTYPE (table 4.12): 0 load, 1 store, 4-6 CSR; CSR data: the operand
    # above the value, each in the bytes its packet gave it (the fewest
    # that hold it: etrace-data.h)
    dtypes = {'load': 0, 'store': 1, 'csrrw': 4, 'csrrs': 5, 'csrrc': 6}

    def nbytes(v):
        return max(1, (v.bit_length() + 7) // 8)

    ref = [(int(r['DTYPE']), int(r['DADDR'], 16), int(r['DATA'], 16))
           for r in csv.DictReader(open(ref_path))]
    ours = []
    accesses = []
    for line in open(ours_path):
        d = json.loads(line).get('data')
        # a list: an instruction of several accesses (Zcmp's push, pop)
        accesses += d if isinstance(d, list) else [d] if d else []
    for d in accesses:
        value = int(d.get('value', '0'), 16)      # 0: not sent
        if 'operand' in d and (int(d['addr'], 16) >> 10) != 3:
            value |= int(d['operand'], 16) << (8 * nbytes(value))
        if d['dtype'] not in dtypes:
            # an atomic: the model's atomic packet is not the draft's
            # (size 2 bits, op_len size bits): it stops here
            what = 'data accesses before the first atomic'
            ref = ref[:len(ours)]
            break
        ours.append((dtypes[d['dtype']], int(d['addr'], 16), value))
    else:
        what = 'data accesses'
same = ref == ours
print('%d %s from the reference model, %d from rvtrace-decode: %s' %
      (len(ref), what, len(ours), 'identical' if same else 'DIFFERENT'))
if not same:
    for n, (a, b) in enumerate(zip(ref, ours)):
        if a != b:
            print('first difference at %d: %r against %r' % (n, a, b))
            break
sys.exit(0 if same and ref else 1)
EOF

scf() {
    cat <<EOF
[Required Attributes]
arch_p=1
bpred_size_p=6
cache_size_p=4
call_counter_size_p=4
context_width_p=$(( $1 == 32 ? 9 : 16 ))
time_width_p=0
ecause_width_p=6
f0s_width_p=1
iaddress_lsb_p=1
iaddress_width_p=$1
nocontext_p=0
notime_p=1
privilege_width_p=3
return_stack_size_p=4
sijump_p=1
[required]
daddress_width_p = $1
dblock_width_p = 1
data_width_p = $1
dsize_width_p = 3
dtype_width_p = 4
iaddr_lsbs_width_p = 1
lrid_width_p = 1
lresp_width_p = 1
ldata_width_p = $1
sdata_width_p = $1
EOF
}

# name guest xlen append (data=M: also the data accesses)
cases=(
    "coremark workloads 64 work=coremark_iters=2_trace=0"
    "sort workloads 64 work=sort_iters=1_trace=0"
    "recursion workloads 64 work=recursion_iters=2_trace=0"
    "traps traps 64 rounds=1_trace=0"
    "full-address workloads 64 work=sort_iters=1_trace=1"
    "resync workloads 64 work=coremark_iters=1_trace=0_syncmode=1_syncmax=0"
    "resync-halfwords workloads 64 work=recursion_iters=2_trace=0_syncmode=3_syncmax=1"
    "resync-cycles-traps traps 64 rounds=1_trace=0_syncmode=2_syncmax=1"
    "traps-rv32 traps 32 rounds=1_trace=0"
    "data-full workloads 64 work=coremark_iters=1_trace=0_data=2"
    "data-traps traps 64 rounds=1_trace=0_data=2"
    "data-rv32 workloads 32 work=sort_iters=1_trace=0_data=2"
    "data-addresses workloads 64 work=coremark_iters=1_trace=0_data=3"
    "data-addresses-traps traps 64 rounds=1_trace=0_data=3"
    "random-2 random-2 64 rounds=6_modes=1_irq=200_seed=2_trace=0"
    "random-2-resync random-2 64 rounds=6_modes=1_irq=200_seed=2_trace=0_syncmode=3_syncmax=1"
    "random-4-rv32 random-4 32 rounds=6_modes=1_irq=200_seed=4_trace=0"
    "random-8-link-regs random-8 64 rounds=6_modes=1_irq=200_seed=8_trace=0"
    "data-random-4-rv32 random-4 32 rounds=6_modes=1_irq=200_seed=4_trace=0_data=3_bufsize=8388608"
)
failed=0
for c in "${cases[@]}"; do
    read -r name guest xlen append <<< "$c"
    elf=$elfs/e2e-$guest-rv$xlen.elf
    dir=$work/$name
    extra=()
    case $append in
    *data=*) extra=(--memlog "$memlog") ;;
    esac
    if ! interop_e2e "$dir" "$work/$name.log" "$elf" "$xlen" "$append" \
            "${arch2[@]}" "${extra[@]}"; then
        echo "$name: the e2e run failed"
        tail -5 "$work/$name.log"
        failed=1
        continue
    fi
    python3 "$work/split.py" "$dir/trace-hart0.bin" "$dir/inst.te_inst_raw" \
        "$dir/data.te_data_raw"
    scf "$xlen" > "$dir/ref.scf"
    rv32=false
    [ "$xlen" = 32 ] && rv32=true
    printf '[required]\nobject-files = %s\n[flags]\nuse-rv32-isa = %s\n' \
        "$elf" "$rv32" > "$dir/ref.ucf"
    (cd "$dir" && python3 "$work/ref/decoder_model.py" -c ref.scf \
        -u ref.ucf -i inst.te_inst_raw > decoder_model.txt 2>&1) || true
    if ! python3 "$work/compare.py" inst "$dir/inst.decoder.trace" \
            "$dir/decoded-hart0.txt" | sed "s/^/$name: /"; then
        echo "$name: decoder_model.py disagrees"
        tail -3 "$dir/decoder_model.txt"
        failed=1
    fi
    case $append in
    *data=*)
        (cd "$dir" && python3 "$work/ref/data_decoder_model.py" -c ref.scf \
            -i data.te_data_raw > data_decoder_model.txt 2>&1) || true
        if ! python3 "$work/compare.py" data "$dir/data.decoder.trace" \
                "$dir/decoded-data-hart0.json" | sed "s/^/$name: /"; then
            echo "$name: data_decoder_model.py disagrees"
            tail -3 "$dir/data_decoder_model.txt"
            failed=1
        fi
        ;;
    esac
done
[ $failed = 0 ] || die "the reference flow disagreed on some cases"
info "the reference flow decodes every case as rvtrace-decode does"

# The other way round: encoder_model.py encodes the instructions this
# QEMU's trace decoded to (the encoder input port of chapter 4, one
# retired instruction per row, itype from the objdump of the ELF and the
# next address), rvtrace-decode decodes its packets, and both encoders'
# bits per instruction are printed.  The model's support packet gets this
# encoder's option bits (the inverse of split.py's rewrite).  The two
# encoders send the same packets but for the model's irdepth, all ones
# where it carries nothing, which sign-based compression removes only
# from packets whose address is negative (this encoder sends the sign).
cat > "$work/enc-input.py" <<'EOF'
import re
import subprocess
import sys

objdump, elf, decoded, out = sys.argv[1:5]
insns = {}
for line in subprocess.run([objdump, '-M', 'no-aliases', '-d', elf],
                           capture_output=True, text=True).stdout.splitlines():
    f = line.split('\t')
    if len(f) >= 3 and re.match(r'\s*[0-9a-f]+:$', f[0]):
        insns[int(f[0].strip()[:-1], 16)] = (len(f[1].strip()) // 2,
                                             f[2].strip(),
                                             f[3] if len(f) > 3 else '')
pcs = [int(l, 16) for l in open(decoded) if l.startswith('0x')]
BRANCHES = {'beq', 'bne', 'blt', 'bge', 'bltu', 'bgeu', 'c.beqz', 'c.bnez'}


def itype(pc, nxt):
    """Table 4.3 with itype_width_p 3: 0, 3 return, 4/5 branch, 6 jump"""
    size, op, args = insns[pc]
    if op in BRANCHES:
        return 4 if nxt == pc + size else 5
    if op in ('c.jr', 'c.jalr') or (op == 'jalr' and
                                   not args.endswith('(zero)')):
        return 6
    if op in ('mret', 'sret', 'uret', 'dret'):
        return 3
    return 0


with open(out, 'w') as f:
    f.write('itype_0,cause,tval,priv,iaddr_0,context,ctype,iretire_0,'
            'ilastsize_0\n')
    for i, pc in enumerate(pcs):
        size = insns[pc][0]
        nxt = pcs[i + 1] if i + 1 < len(pcs) else pc + size
        f.write('%d,0,0,3,%x,0,0,%d,%d\n' %
                (itype(pc, nxt), pc, size // 2, size == 4))
print(len(pcs))
EOF

cat > "$work/from-ref.py" <<'EOF'
import sys

raw = open(sys.argv[1], 'rb').read()
out = bytearray()
i = 0
while i < len(raw):
    h = raw[i]
    n = h & 0x1f
    payload = raw[i + 1:i + 1 + n]
    i += 1 + n
    if payload[0] & 0xf == 0xf:         # format 3 subformat 3
        v = int.from_bytes(payload, 'little')
        head = v & 0xff
        io = (v >> 8) & 0x1f
        denable, dloss = (v >> 13) & 1, (v >> 14) & 1
        # the model's ioptions (0 IR, 1 IE, 2 FA, 3 JTC, 4 BP) in this
        # encoder's bits (etrace.h); its IR is a return stack
        opts = ((io >> 2) & 1) | ((io >> 1) & 1) << 1 | (io & 1) << 4 | \
               ((io >> 4) & 1) << 5 | ((io >> 3) & 1) << 6
        v = head | opts << 8 | denable << 20 | dloss << 21
        payload = v.to_bytes(3, 'little')
    out += bytes([len(payload)]) + payload
open(sys.argv[2], 'wb').write(out)
EOF

# name append ucf [codec] full-address.  Not full addresses: the model
# sends them unshifted (its AddressHandler.get() drops no iaddress_lsb_p
# bits in that mode, where its own decoder, and the spec, drop them).
enc_cases=(
    "coremark work=coremark_iters=2_trace=0 false"
    "sort work=sort_iters=1_trace=0 false"
    "recursion work=recursion_iters=2_trace=0 false"
)
elf=$elfs/e2e-workloads-rv64.elf
echo "Bits per instruction, default modes, no periodic sync:"
printf '%-16s %12s %12s %16s\n' workload instructions "this QEMU" \
    "encoder_model"
for c in "${enc_cases[@]}"; do
    read -r name append full <<< "$c"
    dir=$work/enc-$name
    interop_e2e "$dir" "$work/enc-$name.log" "$elf" 64 \
        "syncmode=0_$append" "${arch2[@]}" ||
        die "$name: the e2e run failed ($(tail -1 "$work/enc-$name.log"))"
    python3 "$work/split.py" "$dir/trace-hart0.bin" "$dir/inst.te_inst_raw" \
        "$dir/data.te_data_raw"
    n=$(python3 "$work/enc-input.py" \
        "$RISCV_TOOLCHAIN/bin/riscv64-unknown-elf-objdump" "$elf" \
        "$dir/decoded-hart0.txt" "$dir/ref_input")
    scf 64 > "$dir/ref.scf"
    printf '[required]\nfile-stem = ref\n[codec]\nresync-max = 20\n%s\n' \
        "full-address = $full" > "$dir/enc.ucf"
    for o in implicit-except si-jump implicit-return branch-prediction \
             jump-target-cache; do
        echo "$o = false" >> "$dir/enc.ucf"
    done
    (cd "$dir" && python3 "$work/ref/encoder_model.py" -c ref.scf \
        -u enc.ucf > encoder_model.txt 2>&1) ||
        die "$name: encoder_model.py failed ($(tail -1 "$dir/encoder_model.txt"))"
    python3 "$work/from-ref.py" "$dir/ref_input.te_inst_raw" "$dir/ref.bin"
    "$decoder" -e "$elf" --arch 2.0 "$dir/ref.bin" > "$dir/ref-decoded.txt" ||
        die "$name: rvtrace-decode refused encoder_model.py's packets"
    if ! python3 "$work/compare.py" inst "$dir/ref-decoded.txt" \
            "$dir/decoded-hart0.txt" > "$dir/compare.txt"; then
        cat "$dir/compare.txt"
        die "$name: rvtrace-decode decodes encoder_model.py's packets to" \
            "other instructions"
    fi
    printf '%-16s %12d %12.3f %16.3f\n' "$name" "$n" \
        "$(echo "8 * $(stat -c %s "$dir/inst.te_inst_raw") / $n" | bc -l)" \
        "$(echo "8 * $(stat -c %s "$dir/ref_input.te_inst_raw") / $n" | bc -l)"
done
info "rvtrace-decode decodes encoder_model.py's packets to the instructions"
