#!/usr/bin/env bash
# The Actions cache key of the benchgate install: the runner's OS and architecture, and the
# release version, or for `source` a hash of the action's own sources (what `cargo install
# --path` builds from: a moved tag or a new commit with other code is another key).
set -euo pipefail

version="${INPUT_VERSION:-source}"
if [ "$version" = source ]; then
    cd "$GITHUB_ACTION_PATH"
    what="source-$(find Cargo.toml Cargo.lock src core collector gate dashboards migrations \
        -type f -not -path '*/tests/*' -print0 2>/dev/null | LC_ALL=C sort -z |
        xargs -0 sha256sum | sha256sum | cut -c1-16)"
else
    what="$version"
fi
echo "key=benchgate-bin-${RUNNER_OS:-Linux}-${RUNNER_ARCH:-X64}-$what" >> "$GITHUB_OUTPUT"
