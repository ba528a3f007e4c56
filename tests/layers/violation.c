/* The layers test's fixture: a function as a codec/ file would be if it
 * called into the dataplane. tests/layers/check_layers.py adds this
 * archive to the codec layer and must report gw_dp_open. */
#include <gw/dataplane.h>

int gw_layers_fixture(const gw_dp_config *cfg, gw_dp **out);
int gw_layers_fixture(const gw_dp_config *cfg, gw_dp **out)
{
	return gw_dp_open(cfg, out);
}
