#!/bin/bash
# Run one bare-metal guest test on the virt machine; the exit status of
# QEMU (the virt test finisher) is the verdict.
#
#   run-guest.sh QEMU ELF CPU [--expect-fail TEXT] [--migrate-after S]
#                [-- QEMU-ARGS...]
#
# --expect-fail inverts it: the guest must fail and print TEXT, which is how
# the suite checks that a failing check fails the run and is named.
# --migrate-after S: S seconds into the run the VM migrates to a second
# QEMU (through a file), which finishes it; the guest must still be
# running when it migrates.
set -u
qemu=$1 elf=$2 cpu=$3
shift 3
expect=
migrate=
while [ $# -gt 0 ]; do
    case "$1" in
    --expect-fail) expect=$2; shift 2 ;;
    --migrate-after) migrate=$2; shift 2 ;;
    --) shift; break ;;
    *) break ;;
    esac
done

run_qemu() {
    "$qemu" -M virt -bios none -display none -cpu "$cpu" -kernel "$elf" \
        "$@" 2>&1
}

# The source, its monitor on a coprocess: migrate to DIR/vm.state, then
# ask the status until it is postmigrate (HMP's migrate may return while
# the run state is still finish-migrate: the migration completed, the
# state not yet changed), for up to a minute, and quit.  Prints what the
# monitor printed.
migrate_source() {
    local dir=$1 line status out='' i
    shift
    coproc MON { run_qemu -monitor stdio -serial "file:$dir/serial" "$@"; }
    local in=${MON[1]} from=${MON[0]} pid=$MON_PID
    sleep "$migrate"
    printf 'migrate "exec:cat > %s/vm.state"\n' "$dir" 2>/dev/null >&"$in"
    for ((i = 0; i < 600; i++)); do
        printf 'info status\n' 2>/dev/null >&"$in" || break
        status=
        while IFS= read -r -t 60 line 2>/dev/null <&"$from"; do
            out+="$line"$'\n'
            if [[ $line == *'VM status'* ]]; then
                status=$line
                break
            fi
        done
        [[ -z $status || $status == *postmigrate* ]] && break
        sleep 0.1
    done
    printf 'quit\n' 2>/dev/null >&"$in"
    while IFS= read -r -t 60 line 2>/dev/null <&"$from"; do
        out+="$line"$'\n'
    done
    wait "$pid" 2>/dev/null
    printf '%s' "$out"
}

# The guest's serial output on the source, then on the destination.
run_migrated() {
    local dir monitor
    dir=$(mktemp -d) || exit 1
    monitor=$(migrate_source "$dir" "$@")
    cat "$dir/serial"
    case "$monitor" in
    *postmigrate*) ;;
    *) printf 'run-guest: the source did not migrate:\n%s\n' "$monitor"
       rm -rf "$dir"; return 1 ;;
    esac
    if grep -q '^PASS\|^FAIL' "$dir/serial"; then
        echo "run-guest: the guest ended before the migration"
        rm -rf "$dir"
        return 1
    fi
    echo "run-guest: migrated after $migrate s"
    run_qemu -monitor none -serial stdio -incoming "exec:cat $dir/vm.state" \
        "$@"
    local status=$?
    rm -rf "$dir"
    return $status
}

if [ -n "$migrate" ]; then
    out=$(run_migrated "$@")
else
    out=$(run_qemu -monitor none -serial stdio "$@")
fi
status=$?
printf '%s\n' "$out"
if [ -z "$expect" ]; then
    exit $status
fi
if [ $status = 0 ]; then
    echo "run-guest: expected the guest to fail, it passed"
    exit 1
fi
case "$out" in
*"$expect"*) echo "run-guest: failed as expected, naming: $expect"; exit 0 ;;
esac
echo "run-guest: the guest failed (status $status) without printing: $expect"
exit 1
