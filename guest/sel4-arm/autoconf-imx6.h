/*
 * seL4 5.0.0 for QEMU's sabrelite (i.MX6 Quad, Cortex-A9; seL4's platform
 * imx6, board sabre): the board's entries as the source's
 * include/plat/imx6/autoconf.h has them (with its Cortex-A9 erratum), then
 * oscycles' ARM configuration.
 */
#define AUTOCONF_INCLUDED
#define CONFIG_ARM_CORTEX_A9 1
#define CONFIG_ARM_ERRATA_764369 1
#define CONFIG_PLAT_IMX6 1
#define CONFIG_PLAT_SABRE 1
#include "autoconf-arm-release.h"
