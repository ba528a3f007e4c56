/* Seeds of fuzz_libsvm.c, gw-train's LIBSVM reader. LIBSVM seeds are
 * text data sets with comments, blank lines, CRLF and every number
 * notation; the hand-written ones are committed in regress/libsvm/. */
#include <stdio.h>

#include "seeds_common.h"

void seeds_libsvm(void)
{
	static const char *const fmt[] = {"%g", "%.9g", "%.3e", "%a"};
	static const char *const names[] = {"rows-g.ok", "rows-g9.ok",
					    "rows-e.ok", "rows-hex.ok"};
	static char text[1 << 15];
	mc_reseed("libsvm");
	for (int f = 0; f < 4; f++) {
		size_t n = 0;
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "# seed %d\n", f);
		for (int r = 0; r < 60 && n < sizeof(text) - 4096; r++) {
			n += (size_t)snprintf(text + n, sizeof(text) - n,
					      r % 3 ? "%d" : "%+d",
					      (int)(mc_next_u64() % 3) - 1);
			unsigned idx = 0;
			for (int k = 0; k < 12; k++) {
				idx += 1 + (unsigned)(mc_next_u64() % (k == 11 ? 100000 : 9));
				n += (size_t)snprintf(text + n, sizeof(text) - n,
						      mc_next_u64() % 4 ? " %u:" : "\t%u:",
						      idx);
				n += (size_t)snprintf(text + n, sizeof(text) - n,
						      fmt[f], mc_gradient(10));
			}
			n += (size_t)snprintf(text + n, sizeof(text) - n, "%s",
					      r % 7 == 3 ? "  # note\r\n"
					      : r % 5 == 0 ? "\r\n\n"
							   : "\n");
		}
		/* ".ok": regress_main checks that each is accepted */
		mc_write_file("libsvm", names[f], text, n - 1);   /* last '\n' cut */
	}
}
