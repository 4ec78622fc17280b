#!/bin/bash
# The tree and series scripts on a scratch copy of the project and of
# qemu/src: idempotent sync, a patch that no longer applies names the
# patch and the file, an edit made in place is refused (and dropped with
# --force), stale links go, a file a patch creates and a later overlay
# file replaces (code motion), edit-patch.sh, and export-series.sh
# refusing unlisted overlay files and reporting checkpatch errors.
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
unset RVPA_QEMU RVPA_BUILD     # the scratch copy must use its own tree
fail=0
ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; fail=1; }

[ -d "$root/qemu/src/.git" ] || { echo "1..0 # SKIP no qemu/src (run scripts/fetch-qemu.sh)"; exit 0; }
echo "1..11"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# A scratch project: the real scripts and series, its own QEMU tree.
mkdir -p "$scratch/proj/qemu"
cp -r "$root/scripts" "$root/patches" "$scratch/proj/"
for d in target-riscv hw-riscv-trace tests-qtest docs; do
    [ -d "$root/$d" ] && cp -r "$root/$d" "$scratch/proj/"
done
git clone -q --shared "$root/qemu/src" "$scratch/proj/qemu/src"
git -C "$scratch/proj/qemu/src" tag rvpa-base "$(git -C "$root/qemu/src" rev-parse rvpa-base)" 2>/dev/null
git -C "$scratch/proj/qemu/src" checkout -q rvpa-base
tree=$scratch/proj/scripts/qemu-tree.sh
src=$scratch/proj/qemu/src

out=$(bash "$tree" 2>&1) && [ -L "$src/target/riscv/insn_class.c" ] &&
    ok "sync applies the series and links the overlay" ||
    not_ok "sync: $out"

# Patch 0004 creates target/riscv/ctr.c (the CTR engine moved verbatim),
# 0005 replaces it with the project's file: the tree holds the link, the
# exported series both versions.
export=$scratch/proj/scripts/export-series.sh
moved=$(grep -n '^0004-' "$scratch/proj/patches/series" | cut -d: -f1)
if [ -L "$src/target/riscv/ctr.c" ] && [ -n "$moved" ] &&
   bash "$export" "$scratch/motion" >/dev/null 2>&1; then
    m=$(ls "$scratch"/motion/0004-*.patch "$scratch"/motion/0005-*.patch 2>/dev/null)
    if grep -q '^+ \* Moved from cpu_helper.c and csr.c' $m &&
       grep -q '^- \* Moved from cpu_helper.c and csr.c' $m; then
        ok "a file a patch creates and a later overlay file replaces"
    else
        not_ok "the code-motion file is not in patch 4 or not replaced in 5"
    fi
else
    not_ok "code motion: no link for target/riscv/ctr.c or the export failed"
fi

before=$(stat -c %Y "$src/target/riscv/meson.build")
sleep 1
out=$(bash "$tree" 2>&1)
[ -z "$out" ] && [ "$(stat -c %Y "$src/target/riscv/meson.build")" = "$before" ] &&
    ok "a second sync changes nothing" || not_ok "second sync: $out"

echo "/* edited in place */" >> "$src/target/riscv/cpu.c"
if out=$(bash "$tree" 2>&1); then
    not_ok "an edit in place was accepted"
else
    case "$out" in
    *"edited in place"*"target/riscv/cpu.c"*) ok "an edit in place stops the sync, naming the file" ;;
    *) not_ok "wrong message for an edit in place: $out" ;;
    esac
fi
out=$(bash "$tree" --force 2>&1) && ! grep -q "edited in place" "$src/target/riscv/cpu.c" &&
    ok "--force drops the edit" || not_ok "--force: $out"

p=$scratch/proj/patches/0001-target-riscv-add-a-control-transfer-classifier.patch
sed -i "s/^   'translate.c',/   'no-such-line.c',/" "$p"
if out=$(bash "$tree" 2>&1); then
    not_ok "a patch that does not apply was accepted"
else
    case "$out" in
    *"patches/0001-target-riscv-add-a-control-transfer-classifier.patch does not apply to target/riscv/meson.build"*)
        ok "a patch that does not apply is named, with its file" ;;
    *) not_ok "wrong message for a failing patch: $out" ;;
    esac
fi
cp "$root/patches/$(basename "$p")" "$p"

mv "$scratch/proj/target-riscv/insn_class.h" "$scratch/proj/target-riscv/gone.h"
bash "$tree" >/dev/null 2>&1
[ ! -e "$src/target/riscv/insn_class.h" ] && [ -L "$src/target/riscv/gone.h" ] &&
    ok "links follow renamed overlay files" || not_ok "stale or missing overlay link"
mv "$scratch/proj/target-riscv/gone.h" "$scratch/proj/target-riscv/insn_class.h"
bash "$tree" >/dev/null 2>&1
edit=$scratch/proj/scripts/edit-patch.sh
echo "/* hook */" >> "$src/target/riscv/cpu.h"
# The new patch comes after the project's own.
n=$(printf '%04d' $(($(grep -c '^[0-9]' "$scratch/proj/patches/series") + 1)))
out=$(bash "$edit" new test-hook "target/riscv: test hook" 2>&1)
p3=$scratch/proj/patches/$n-test-hook.patch
[ -f "$p3" ] && grep -q '^+/\* hook \*/' "$p3" &&
    grep -q "^$n-test-hook.patch$" "$scratch/proj/patches/series" &&
    [ -z "$(git -C "$src" status --porcelain --untracked-files=no)" ] &&
    ok "edit-patch new turns an edit in place into the last patch" ||
    not_ok "edit-patch new: $out"

echo "/* more */" >> "$src/target/riscv/cpu.h"
out=$(bash "$edit" amend 2>&1)
grep -q '^+/\* hook \*/' "$p3" && grep -q '^+/\* more \*/' "$p3" &&
    grep -q '^Subject: \[PATCH\] target/riscv: test hook' "$p3" &&
    [ -z "$(git -C "$src" status --porcelain --untracked-files=no)" ] &&
    ok "edit-patch amend folds an edit into the last patch" ||
    not_ok "edit-patch amend: $out"
printf '/* x */\n' > "$scratch/proj/target-riscv/unlisted.c"
if out=$(bash "$export" "$scratch/series" 2>&1); then
    not_ok "an overlay file missing from patches/series was exported"
else
    case "$out" in
    *"target-riscv/unlisted.c is not listed in patches/series"*)
        ok "export refuses an overlay file no series line names" ;;
    *) not_ok "wrong message for an unlisted file: $out" ;;
    esac
fi
# A C file in QEMU's tree with a style error checkpatch.pl reports.
printf '#include "qemu/osdep.h"\nint f(void) {\n\treturn 0;\n}\n' \
    > "$scratch/proj/target-riscv/unlisted.c"
sed -i "s|^$n-test-hook.patch\$|& target-riscv/unlisted.c|" "$scratch/proj/patches/series"
if out=$(bash "$export" --check "$scratch/series" 2>&1); then
    not_ok "checkpatch errors did not fail the export: $out"
else
    case "$out" in
    *"$n-target-riscv-test-hook.patch: total: "[1-9]*" errors"*"checkpatch.pl found"*)
        ok "checkpatch errors fail the export, naming the patch" ;;
    *) not_ok "wrong report for checkpatch errors: $out" ;;
    esac
fi
exit $fail
