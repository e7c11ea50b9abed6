/* SPDX-License-Identifier: MIT */
/* The pictures' own scripts (flame_svg.js, this folder), compiled into the
 * binary (analysis/core/ana_asset.h). */
#ifndef ANA_PICTURES_ASSETS_H
#define ANA_PICTURES_ASSETS_H

#include "analysis/core/ana_asset.h"

/* Every asset of src/analysis/pictures/, ending with a {NULL} entry. */
extern const struct ana_asset ana_pictures_assets[];

#endif
