#!/bin/bash
# Download Debian trixie binary packages (guest firmware, kernel, tools)
# and extract them under build/trixie/, without installing anything on
# the system: apt runs with a private source list, index and cache, so
# the system's sources and its pin against trixie binaries stay as they
# are.  The packages are checked by apt against trixie's signed indexes.
#
#   scripts/fetch-trixie.sh [--deps [--only REGEX] [--exclude REGEX]]
#                           [--into DIR] PACKAGE[:ARCH]...
#   e.g. scripts/fetch-trixie.sh opensbi
#        scripts/fetch-trixie.sh --deps --into root linux-perf:riscv64
#
# Prints the directory each package was extracted to (build/trixie/NAME),
# or DIR with --into, where all of them are extracted together (a root
# file system).  --deps adds what the packages depend on, recursively
# (Depends only, the same architecture), of those only the packages
# whose names match --only, but those that match --exclude.  The .deb files are kept in the shared cache
# (RVPA_CACHE/trixie).
set -euo pipefail

. "$(dirname "$0")/lib.sh"

deps=0 only='.*' exclude='$^' into=
while [ $# -gt 0 ]; do
    case "$1" in
    --deps) deps=1; shift ;;
    --only) only=$2; shift 2 ;;
    --exclude) exclude=$2; shift 2 ;;
    --into) into=$2; shift 2 ;;
    *) break ;;
    esac
done
[ $# -gt 0 ] || die "usage: $0 [--deps [--only RE] [--exclude RE]] [--into DIR]" \
    "PACKAGE[:ARCH]..."
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

pkgs=("$@")
if [ $deps = 1 ]; then
    # the architecture of the first package (:ARCH), or the host's
    case "$1" in *:*) same=":${1#*:}\$" ;; *) same='^[^:]*$' ;; esac
    mapfile -t pkgs < <(
        apt-cache "${apt_opts[@]}" depends --recurse --no-recommends \
            --no-suggests --no-conflicts --no-breaks --no-replaces \
            --no-enhances "$@" 2>/dev/null |
        grep -v '^ ' | grep -E "$same" | grep -E "^($only)(:|$)" |
        grep -Ev "^($exclude)(:|$)" |
        sort -u)
fi

# The candidate versions, from one look at the index; the packages not in
# the cache yet, in one download.
declare -A version
while read -r pkg ver; do
    version[$pkg]=$ver
done < <(apt-cache "${apt_opts[@]}" policy "${pkgs[@]}" |
         awk '/^[^ ]/ { sub(/:$/, ""); p = $0 }
              /^ *Candidate:/ { print p, $2 }')
deb_of() {  # apt names the file with the epoch's ':' escaped
    ls "$debs/${1%%:*}_${2//:/%3a}_"*.deb 2>/dev/null | head -1
}
missing=()
for pkg in "${pkgs[@]}"; do
    v=${version[$pkg]:-}
    [ -n "$v" ] && [ "$v" != "(none)" ] || die "trixie has no package $pkg"
    [ -n "$(deb_of "$pkg" "$v")" ] || missing+=("$pkg=$v")
done
if [ ${#missing[@]} -gt 0 ]; then
    (cd "$debs" && apt-get "${apt_opts[@]}" -q download "${missing[@]}" \
        >/dev/null) || die "apt-get download ${missing[*]} failed"
fi

[ -z "$into" ] || mkdir -p "$into"
for pkg in "${pkgs[@]}"; do
    name=${pkg%%:*}
    deb=$(deb_of "$pkg" "${version[$pkg]}")
    [ -n "$deb" ] || die "no .deb of $pkg=${version[$pkg]} in $debs"
    if [ -n "$into" ]; then
        dpkg-deb -x "$deb" "$into"
        continue
    fi
    dest=$out/$name
    if [ ! -f "$dest/.version" ] ||
       [ "$(cat "$dest/.version")" != "${version[$pkg]}" ]; then
        rm -rf "$dest"
        mkdir -p "$dest"
        dpkg-deb -x "$deb" "$dest"
        echo "${version[$pkg]}" > "$dest/.version"
    fi
    echo "$dest"
done
[ -z "$into" ] || echo "$into"
