import Prometheus

/// Counters and gauges made under a whole Prometheus name, through swift-prometheus' descriptor
/// API (2.4: the `name:` makers are deprecated). perfhud's names are contracts written whole
/// (docs/daemon.md), not assembled from a namespace, a subsystem and a unit, so the descriptor
/// carries the whole name as its `metricName` and an empty unit, which `MetricNameDescriptor.name`
/// leaves out.
extension PrometheusCollectorRegistry {
    func counter(_ name: String, labels: [(String, String)] = [], help: String) -> Counter {
        makeCounter(descriptor: Self.descriptor(name, help), labels: labels)
    }

    func gauge(_ name: String, labels: [(String, String)] = [], help: String) -> Gauge {
        makeGauge(descriptor: Self.descriptor(name, help), labels: labels)
    }

    private static func descriptor(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }
}
