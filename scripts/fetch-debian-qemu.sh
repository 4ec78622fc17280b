#!/bin/bash
# Debian's own qemu-system-riscv64 (bookworm-backports' qemu-system-riscv,
# QEMU 10.0.2: what a user would run instead of this project's build),
# downloaded with apt-get and extracted with dpkg-deb under the cache,
# with the libraries it needs that the system does not have.  Nothing is
# installed on the system.
#
#   scripts/fetch-debian-qemu.sh
#
# Prints the path of a wrapper that runs it (LD_LIBRARY_PATH set to the
# extracted libraries).  scripts/bench.sh uses it as its baseline.
set -euo pipefail

. "$(dirname "$0")/lib.sh"

pkg=qemu-system-riscv
suite=bookworm-backports
# bookworm has no QEMU 10: the candidate is bookworm-backports' version
version=$(apt-cache policy "$pkg" 2>/dev/null |
          awk '/Candidate:/ && $2 != "(none)" { print $2 }')
[ -n "$version" ] || die "no $pkg in $suite: is $suite in apt's sources" \
    "(scripts/install-deps.sh adds it)?"
dir=$RVPA_CACHE/debian-qemu/${version//:/_}
wrapper=$dir/qemu-system-riscv64
if [ -x "$wrapper" ]; then
    echo "$wrapper"
    exit 0
fi

# The package and its libraries' packages that the system lacks.
mapfile -t deps < <(
    apt-cache depends -t "$suite" --recurse --no-recommends --no-suggests \
        --no-conflicts --no-breaks --no-replaces --no-enhances \
        --no-pre-depends "$pkg" 2>/dev/null |
    grep -v '^ ' | grep -v '<' | grep -E '^lib' | sort -u)
want=("$pkg=$version")
for p in "${deps[@]}"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
        grep -q '^install ok installed' || want+=("$p")
done
tmp=$dir.tmp
rm -rf "$tmp"
mkdir -p "$tmp/debs"
(cd "$tmp/debs" && apt-get -q -o APT::Sandbox::User=root download \
    "${want[@]}" >/dev/null) || die "apt-get download failed: ${want[*]}"
for deb in "$tmp"/debs/*.deb; do
    dpkg-deb -x "$deb" "$tmp/root"
done
cat > "$tmp/qemu-system-riscv64" <<EOS
#!/bin/sh
# Debian's qemu-system-riscv64 $version (scripts/fetch-debian-qemu.sh)
root=$dir/root
LD_LIBRARY_PATH=\$root/usr/lib/x86_64-linux-gnu:\$root/lib/x86_64-linux-gnu\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH} \\
    exec \$root/usr/bin/qemu-system-riscv64 "\$@"
EOS
chmod +x "$tmp/qemu-system-riscv64"
rm -rf "$tmp/debs"
rm -rf "$dir"
mv "$tmp" "$dir"
"$wrapper" --version >/dev/null || die "the extracted $pkg does not run"
echo "$wrapper"
