# SPDX-License-Identifier: MIT
# memscribe check (docs/check.md): the gate on the two builds of
# tests/programs/diff_prog.c (built by diff.cmake), and record --check.
ms_e2e_test(check_gate check_gate.sh)
ms_e2e_test(check_record check_record.sh)
ms_unit_test(test_ana_check ${PROJECT_SOURCE_DIR}/tests/unit/test_ana_check.c
             LIBS ms_analysis ms_format)
# check's figures are report's fields; growth lists sites for every measure.
ms_e2e_test(check_report check_report.sh)
