#!/usr/bin/env bash
# Installs benchgate for the action: the release for this runner (checked against its SHA-256),
# else a build of the action's own checkout. Inputs arrive as environment variables only.
set -euo pipefail

version="${INPUT_VERSION:-source}"
if command -v benchgate >/dev/null 2>&1 && [ "$version" = source ] && [ -n "${BENCHGATE_PREINSTALLED:-}" ]; then
    exit 0
fi

install_dir="${RUNNER_TEMP:-/tmp}/benchgate-bin"
mkdir -p "$install_dir"
echo "$install_dir" >> "$GITHUB_PATH"
export PATH="$install_dir:$PATH"

# The Actions cache restored this install (same version, or the same sources for `source`,
# on this OS and architecture): nothing to download or build.
key="${INPUT_INSTALL_KEY:-}"
if [ -n "$key" ] && [ -x "$install_dir/benchgate" ] && [ "$(cat "$install_dir/.key" 2>/dev/null)" = "$key" ] \
    && "$install_dir/benchgate" --version >/dev/null 2>&1; then
    echo "benchgate: installed from the Actions cache ($key)"
    exit 0
fi
# Whatever installs below, the cache then keeps under this key.
trap 'if [ $? -eq 0 ] && [ -n "$key" ]; then echo "$key" > "$install_dir/.key"; fi' EXIT

build_from_source() {
    echo "benchgate: building from $GITHUB_ACTION_PATH (cargo install --locked)"
    cargo install --locked --root "${install_dir%/benchgate-bin}/benchgate-root" --path "$GITHUB_ACTION_PATH"
    cp "${install_dir%/benchgate-bin}/benchgate-root/bin/benchgate" "$install_dir/"
}

if [ "$version" = source ]; then
    build_from_source
    exit 0
fi

case "${RUNNER_OS:-Linux}-${RUNNER_ARCH:-X64}" in
    Linux-X64) target=x86_64-unknown-linux-gnu ;;
    Linux-ARM64) target=aarch64-unknown-linux-gnu ;;
    macOS-ARM64) target=aarch64-apple-darwin ;;
    macOS-X64) target=x86_64-apple-darwin ;;
    Windows-X64) target=x86_64-pc-windows-msvc ;;
    *) target="" ;;
esac
if [ -z "$target" ]; then
    echo "benchgate: no release for ${RUNNER_OS:-?}/${RUNNER_ARCH:-?}; building from source"
    build_from_source
    exit 0
fi

archive="benchgate-$version-$target.tar.gz"
base="${INPUT_DOWNLOAD_URL%/}/$version"
work="$(mktemp -d)"
if curl --fail --silent --show-error --location --retry 3 -o "$work/$archive" "$base/$archive" \
    && curl --fail --silent --show-error --location --retry 3 -o "$work/$archive.sha256" "$base/$archive.sha256"; then
    expected="$(cut -d' ' -f1 < "$work/$archive.sha256")"
    actual="$(sha256sum "$work/$archive" | cut -d' ' -f1)"
    if [ "$expected" != "$actual" ]; then
        echo "::error title=benchgate::checksum mismatch for $archive: expected $expected, got $actual"
        exit 1
    fi
    tar -xzf "$work/$archive" -C "$install_dir"
    echo "benchgate: installed $version for $target ($actual)"
else
    echo "benchgate: could not download $base/$archive; building from source"
    build_from_source
fi
