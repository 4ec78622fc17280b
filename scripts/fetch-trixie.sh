#!/bin/bash
# Download Debian trixie binary packages (guest firmware, kernel, tools)
# and extract them under build/trixie/, without installing anything on
# the system: apt runs with a private source list, index and cache, so
# the system's sources and its pin against trixie binaries stay as they
# are.  The packages are checked by apt against trixie's signed indexes.
#
#   scripts/fetch-trixie.sh PACKAGE[:ARCH]...
#   e.g. scripts/fetch-trixie.sh opensbi
#        scripts/fetch-trixie.sh linux-image-riscv64:riscv64
#
# Prints the directory each package was extracted to (build/trixie/NAME).
# The .deb files are kept in the shared cache (RVPA_CACHE/trixie).
set -euo pipefail

. "$(dirname "$0")/lib.sh"

[ $# -gt 0 ] || die "usage: $0 PACKAGE[:ARCH]..."
command -v apt-get >/dev/null || die "apt-get not found (a Debian system)"

apt_dir=$RVPA_CACHE/trixie/apt
debs=$RVPA_CACHE/trixie/debs
out=$RVPA_BUILD/trixie
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" \
    "$debs" "$out"
cat > "$apt_dir/sources.list" <<'EOF'
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main
EOF
apt_opts=(
    -o "Dir::Etc::SourceList=$apt_dir/sources.list"
    -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$apt_dir/lists"
    -o "Dir::Cache=$apt_dir/cache"
    -o Dir::Etc::Preferences=/dev/null
    -o Dir::Etc::PreferencesParts=/dev/null
    -o APT::Architectures::=amd64
    -o APT::Architectures::=riscv64
    -o Debug::NoLocking=1
    -o APT::Sandbox::User=root
)

# The index is refreshed once a day at most.
stamp=$apt_dir/updated
if [ -z "$(find "$stamp" -mtime -1 2>/dev/null)" ]; then
    apt-get "${apt_opts[@]}" -q update >/dev/null ||
        die "apt-get update of trixie failed (no network to Debian's archive?)"
    touch "$stamp"
fi

for pkg in "$@"; do
    name=${pkg%%:*}
    version=$(apt-cache "${apt_opts[@]}" policy "$pkg" |
              sed -n 's/^ *Candidate: //p')
    [ -n "$version" ] && [ "$version" != "(none)" ] ||
        die "trixie has no package $pkg"
    (cd "$debs" && apt-get "${apt_opts[@]}" -q download "$pkg=$version" \
        >/dev/null) || die "apt-get download $pkg=$version failed"
    deb=$(ls "$debs/${name}_${version#*:}_"*.deb | head -1)
    dest=$out/$name
    if [ ! -f "$dest/.version" ] || [ "$(cat "$dest/.version")" != "$version" ]; then
        rm -rf "$dest"
        mkdir -p "$dest"
        dpkg-deb -x "$deb" "$dest"
        echo "$version" > "$dest/.version"
    fi
    echo "$dest"
done
