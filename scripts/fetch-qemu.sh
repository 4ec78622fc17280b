#!/bin/bash
# Fetch the QEMU 10.0.x base and unpack it as a git repository.
#
#   scripts/fetch-qemu.sh                    Debian's source package (trixie)
#   scripts/fetch-qemu.sh --tarball FILE     an upstream qemu-10.0.x.tar.xz
#
# Result: qemu/src, a git repository whose tag rvpa-upstream is the tarball
# as released and whose tag rvpa-base adds the build fixes the tarball
# needs (scripts/qemu-base/).  The series (patches/ + overlay) is applied
# on top by scripts/qemu-tree.sh.
#
# Idempotent: an unpacked tree from the same tarball is kept as it is.
# A half-unpacked tree (interrupted run) is removed and unpacked again.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
. "$RVPA_ROOT/scripts/qemu-source.conf"

tarball=
while [ $# -gt 0 ]; do
    case "$1" in
    --tarball) tarball=$(realpath "${2:?--tarball needs a file}"); shift 2 ;;
    *) die "unknown argument '$1' (see the header of $0)" ;;
    esac
done
tarball=${tarball:-${RVPA_QEMU_TARBALL:-}}

mkdir -p "$RVPA_CACHE/dl" "$RVPA_QEMU"

# Pick the newest 1:10.0.x source version the archive offers.
debian_version() {
    local v best=
    for v in $(apt-cache showsrc qemu 2>/dev/null |
               sed -n 's/^Version: \(1:10\.0\.[0-9].*\)/\1/p'); do
        if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then
            best=$v
        fi
    done
    echo "$best"
}

# sha256 of a file of the source package, from apt's signed Sources index.
debian_sha256() {
    apt-cache showsrc "qemu=$1" 2>/dev/null |
        awk -v f="$2" '/^Checksums-Sha256:/ { on = 1; next }
                       /^[^ ]/ { on = 0 }
                       on && $3 == f { print $1; exit }'
}

if [ -n "$tarball" ]; then
    [ -f "$tarball" ] || die "no such tarball: $tarball"
    src_kind=upstream
    sha=$(sha256sum "$tarball" | cut -d' ' -f1)
    case " $QEMU_UPSTREAM_SHA256S ${RVPA_ACCEPT_SHA256:-} " in
    *" $sha "*) ;;
    *) die "sha256 of $tarball is $sha, which is not recorded in" \
           "scripts/qemu-source.conf; check it against qemu.org's published" \
           "checksum, then rerun with RVPA_ACCEPT_SHA256=$sha" ;;
    esac
    version=$(tar xJOf "$tarball" --wildcards '*/VERSION' 2>/dev/null | head -1) ||
        die "cannot read VERSION from $tarball (not a QEMU tarball?)"
else
    src_kind=debian
    command -v apt-get >/dev/null || die "apt-get not found: on a system" \
        "without Debian pass --tarball qemu-10.0.x.tar.xz"
    deb_version=$(debian_version)
    [ -n "$deb_version" ] || die "Debian's archive offers no qemu 1:10.0.x" \
        "source package; run scripts/install-deps.sh (it adds the trixie" \
        "deb-src entry) or pass --tarball"
    version=${deb_version#1:}
    version=${version%%+*}
    tarball_name=qemu_${version}+ds.orig.tar.xz
    if [ "$deb_version" != "$QEMU_DEB_VERSION" ]; then
        cat >&2 <<EOF
################################################################
## NOTE: Debian's archive has moved on from the recorded QEMU
##   recorded: $QEMU_DEB_VERSION   (scripts/qemu-source.conf)
##   using:    $deb_version
## The patches may need a refresh; update qemu-source.conf.
################################################################
EOF
        want_sha=$(debian_sha256 "$deb_version" "$tarball_name")
    else
        want_sha=$QEMU_DEB_SHA256
    fi
    tarball=$RVPA_CACHE/dl/$tarball_name
    if [ ! -f "$tarball" ] ||
       [ "$(sha256sum "$tarball" | cut -d' ' -f1)" != "$want_sha" ]; then
        rm -f "$tarball"
        info "downloading QEMU $deb_version source from Debian's archive"
        (cd "$RVPA_CACHE/dl" &&
         apt-get source --download-only -q "qemu=$deb_version" >/dev/null 2>&1) ||
            die "apt-get source qemu=$deb_version failed (no network to" \
                "Debian's archive, or the archive moved: rerun" \
                "scripts/install-deps.sh)"
    fi
    sha=$(sha256sum "$tarball" | cut -d' ' -f1)
    [ "$sha" = "$want_sha" ] || die "sha256 mismatch for $tarball:" \
        "got $sha, want $want_sha"
fi

case "$version" in
10.0.*) ;;
*) die "QEMU $version is not in the 10.0 series this project is based on" ;;
esac

src=$RVPA_QEMU/src
stamp="$src_kind $version $sha"
if [ -f "$src/.rvpa-source" ] && [ "$(cat "$src/.rvpa-source")" = "$stamp" ] &&
   git -C "$src" rev-parse -q --verify rvpa-base >/dev/null; then
    info "QEMU $version source already unpacked in $src"
    exit 0
fi
if [ -e "$src" ]; then
    info "removing $src (different or incomplete source)"
    rm -rf "$src"
fi

tmp=$RVPA_QEMU/src.tmp
rm -rf "$tmp"
mkdir -p "$tmp"
info "unpacking $(basename "$tarball")"
tar xJf "$tarball" -C "$tmp" --strip-components=1 ||
    die "cannot unpack $tarball"
[ "$(cat "$tmp/VERSION")" = "$version" ] ||
    die "$tarball unpacks to QEMU $(cat "$tmp/VERSION"), expected $version"

git_q() { git -C "$tmp" -c user.name=rvpa -c user.email=rvpa@localhost \
              -c commit.gpgsign=false "$@"; }
git_q init -q -b rvpa
git_q add -A -f .
git_q commit -q -m "QEMU $version ($src_kind tarball, sha256 $sha)"
git_q tag rvpa-upstream
if [ "$src_kind" = debian ]; then
    for p in "$RVPA_ROOT"/scripts/qemu-base/ds-*.patch; do
        git_q apply --index "$p" || die "base fix $p does not apply to QEMU $version"
    done
    git_q commit -q -m "Build fixes for Debian's +ds tarball (scripts/qemu-base)"
fi
git_q tag rvpa-base
echo "$stamp" > "$tmp/.rvpa-source"
echo "/.rvpa-*" >> "$tmp/.git/info/exclude"
mv "$tmp" "$src"
info "QEMU $version ready in $src (tag rvpa-base)"
