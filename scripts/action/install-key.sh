#!/usr/bin/env bash
# The benchgate install: which version (`version=`, `auto` resolved) and its Actions cache key
# (`key=`): the runner's OS and architecture, and the release version, or for `source` a hash
# of the action's own sources (what `cargo install --path` builds from: a moved tag or a new
# commit with other code is another key).
set -euo pipefail

# `auto`: used at a release tag (`uses: benchgate/benchgate@v1.2.0`), that release, which is
# the same code, downloaded and checked in seconds instead of compiled; else a build.
version="${INPUT_VERSION:-auto}"
if [ "$version" = auto ]; then
    if [[ "${INPUT_ACTION_REF:-}" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
        version="$INPUT_ACTION_REF"
    else
        version=source
    fi
fi
echo "version=$version" >> "$GITHUB_OUTPUT"
if [ "$version" = source ]; then
    cd "$GITHUB_ACTION_PATH"
    what="source-$(find Cargo.toml Cargo.lock src core collector gate dashboards migrations \
        -type f -not -path '*/tests/*' -print0 2>/dev/null | LC_ALL=C sort -z |
        xargs -0 sha256sum | sha256sum | cut -c1-16)"
else
    what="$version"
fi
echo "key=benchgate-bin-${RUNNER_OS:-Linux}-${RUNNER_ARCH:-X64}-$what" >> "$GITHUB_OUTPUT"
