/*
 * seL4 5.0.0 for QEMU's mcimx7d-sabre (i.MX7 Dual, Cortex-A7; seL4's
 * platform imx7): the board's entries, then oscycles' ARM configuration.
 * Written here because the source's include/plat/imx7/autoconf.h is a copy
 * of imx6's (it names CONFIG_ARM_CORTEX_A9 and CONFIG_PLAT_IMX6).
 */
#define AUTOCONF_INCLUDED
#define CONFIG_ARM_CORTEX_A7 1
#define CONFIG_PLAT_IMX7 1
#define CONFIG_PLAT_IMX7_SABRE 1
#include "autoconf-arm-release.h"
