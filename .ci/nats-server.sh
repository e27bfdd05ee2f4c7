#!/usr/bin/env bash
# Builds nats-server (the JetStream engine's server) from its Go module into ~/.cache/qbench/bin,
# at the version engines/procs/nats.go pins; skipped when one is on PATH or already built.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(sed -n 's/^const NATSServerVersion = "\(v[0-9.]*\)"/\1/p' engines/procs/nats.go)
bin="$HOME/.cache/qbench/bin"
if command -v nats-server >/dev/null || [ -x "$bin/nats-server" ]; then
  exit 0
fi
echo "== building nats-server $version into $bin" >&2
GOBIN="$bin" go install "github.com/nats-io/nats-server/v2@$version"
