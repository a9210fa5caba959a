#!/usr/bin/env bash
# Copies into charts/linerate/generated/ the files the chart renders from (Helm reads no file outside the
# chart): the CRDs and the manager's ClusterRole that controller-gen generates, the example PrometheusRule and
# the Grafana dashboard. Run it after `make manifests`; test/chart fails while the copies differ.
#
#   hack/sync-chart.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
G=$ROOT/charts/linerate/generated
mkdir -p "$G/crds"
rm -f "$G"/crds/*.yaml
cp "$ROOT"/config/crd/bases/*.yaml "$G/crds/"
cp "$ROOT/config/rbac/role.yaml" "$G/role.yaml"
cp "$ROOT/config/prometheus/prometheusrule.yaml" "$G/prometheusrule.yaml"
cp "$ROOT/config/grafana/linerate-dashboard.json" "$G/linerate-dashboard.json"
echo "sync-chart: $(cd "$G" && find . -type f ! -name README.md | sort | tr '\n' ' ')"
