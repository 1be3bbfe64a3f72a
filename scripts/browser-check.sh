#!/usr/bin/env bash
# Renders herdsim reports in headless Chromium and checks them: every chart shows, every
# chart file and embedded bitmap loads, no console error, no script in the page (see
# scripts/browser_check.py, which drives Chromium over the DevTools pipe).
#
#   scripts/browser-check.sh [--herdsim PATH] [--screenshot DIR] [REPORT.html...]
#
# Without reports, it writes fresh ones into a temporary folder with PATH (default
# target/debug/herdsim, built with `cargo build` when missing): quickstart, a sweep
# (sweep-clients) and a graph of services (quickstart-graph), 2 replications each.
# Installs Debian's chromium with apt-get when it is missing (as root, or through sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

herdsim=""
extra=()
reports=()
while [ $# -gt 0 ]; do
    case "$1" in
        --herdsim) herdsim="$2"; shift 2 ;;
        --screenshot) extra+=(--screenshot "$2"); shift 2 ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) reports+=("$1"); shift ;;
    esac
done

if ! command -v chromium >/dev/null 2>&1; then
    echo "browser-check: chromium is missing; installing it with apt-get" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi
command -v python3 >/dev/null 2>&1 || { echo "browser-check: python3 is needed" >&2; exit 2; }

if [ ${#reports[@]} -eq 0 ]; then
    if [ -z "$herdsim" ]; then
        herdsim=target/debug/herdsim
        [ -x "$herdsim" ] || cargo build --quiet
    fi
    out="$(mktemp -d)"
    trap 'rm -rf "$out"' EXIT
    "$herdsim" run scenarios/quickstart.toml scenarios/sweep-clients.toml \
        scenarios/quickstart-graph.toml --replications 2 --out "$out" --quiet
    reports=("$out"/*/report.html)
fi

python3 scripts/browser_check.py ${extra[@]+"${extra[@]}"} "${reports[@]}"
