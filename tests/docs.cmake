# SPDX-License-Identifier: MIT
# The docs' shape: a README of at most a page or two, bench/README.md of
# results (its history in bench/notes/), docs pages as reference pages, a
# command's page opening with its synopsis and a worked example
# (tests/e2e/docs_shape.sh).
foreach(check readme bench pages commands)
  ms_e2e_test(docs_${check} docs_shape.sh ${check})
endforeach()
