package migration

import "github.com/gatehouse/gatehouse/pkg/metrics"

// The engine's metrics (CONTRACT §5), in the process's registry.
var (
	migrated = metrics.NewCounterVec("gatehouse_migrate_apis_total",
		"APIs a migration handled, by mode and outcome (success, failure, skipped).", "mode", "outcome")
	migratedWithWarnings = metrics.NewCounterVec("gatehouse_migrate_apis_with_warnings_total",
		"Migrated APIs whose report entry carries warnings (behaviour that changes in a gateway), by mode; "+
			"each is also counted in gatehouse_migrate_apis_total{outcome=\"success\"}.", "mode")
)

// count adds a finished migration's APIs to the metrics: by outcome, and
// the successes with warnings.
func count(mode Mode, rep *Report) {
	for outcome, n := range map[string]int{"success": len(rep.Success), "failure": len(rep.Failures), "skipped": len(rep.Skipped)} {
		if n > 0 {
			migrated.WithLabelValues(string(mode), outcome).Add(float64(n))
		}
	}
	if n := len(rep.Warnings); n > 0 {
		migratedWithWarnings.WithLabelValues(string(mode)).Add(float64(n))
	}
}
