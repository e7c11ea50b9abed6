# SPDX-License-Identifier: MIT
# Installing (docs/install.md): cmake --install into a temporary root with
# its man pages rendered, the bash completion, the .debs under lintian,
# and --version's trace format versions.
ms_e2e_test(install_man install_man.sh)
ms_e2e_test(install_completion install_completion.sh)
ms_e2e_test(install_deb install_deb.sh)
ms_e2e_test(version version.sh)
