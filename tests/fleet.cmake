# SPDX-License-Identifier: MIT
# Beyond one machine (docs/fleet.md): the trace as Prometheus metrics.
ms_e2e_test(fleet_metrics fleet_metrics.sh)
ms_e2e_test(fleet_prometheus fleet_prometheus.sh)
ms_e2e_test(fleet_record_metrics fleet_record_metrics.sh)
ms_e2e_test(fleet_pprof fleet_pprof.sh)
ms_e2e_test(fleet_push fleet_push.sh)
ms_test_program(fleet_phases ${PROJECT_SOURCE_DIR}/tests/programs/fleet_phases.c)
ms_e2e_test(fleet_modes fleet_modes.sh)
