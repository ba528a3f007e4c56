/* Monotonic clocks (app.h). */
#include "app.h"
#include "gw_util.h"   /* the clock every layer uses */

uint64_t app_now_ns(void)
{
	return gw_now_ns();
}

double app_now_s(void)
{
	return gw_now_s();
}
