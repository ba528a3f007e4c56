/* Linear models: gw_lin_grad against central differences of its own loss
 * for logreg, svm (away from the hinge's kink) and linreg, bias included;
 * mean over idx (repeats count), g added to, not cleared; columns >= dim
 * ignored; stable logistic loss at large margins; gw_lin_eval's loss and
 * accuracy on a hand-built separable set. */
#include "../gw_test.h"

#include <math.h>

#include "linear.h"

enum { ROWS = 9, DIM = 7, MAXNZ = ROWS * (DIM + 2) };

struct data {
	struct gw_svm d;
	float label[ROWS];
	uint64_t start[ROWS + 1];
	uint32_t col[MAXNZ];
	float val[MAXNZ];
};

/* Random sparse rows with dyadic values (exact in float), some with a
 * column at or beyond DIM, which the model must ignore. Column 5 is never
 * used, so its gradient must stay untouched. */
static void make_data(struct data *s, gw_test_rng *r)
{
	uint64_t k = 0;
	s->start[0] = 0;
	for (uint32_t i = 0; i < ROWS; i++) {
		s->label[i] = gw_test_below(r, 2) ? 1.0f : i % 2 ? -1.0f : 0.0f;
		for (uint32_t c = 0; c < DIM + 2; c++) {
			if (c == 5 || gw_test_below(r, 3) == 0)
				continue;
			s->col[k] = c;
			s->val[k] = (float)((int)gw_test_below(r, 33) - 16) / 8;
			k++;
		}
		s->start[i + 1] = k;
	}
	s->d = (struct gw_svm){.rows = ROWS, .dim = DIM + 2, .nnz = k,
			       .label = s->label, .start = s->start,
			       .col = s->col, .val = s->val};
}

static void fill_w(float *w, gw_test_rng *r)
{
	for (int i = 0; i <= DIM; i++)
		w[i] = (float)((int)gw_test_below(r, 129) - 64) / 64;
}

/* Rows used by the checks: a subset, with a repeat. */
static const uint32_t idx[] = {0, 2, 3, 3, 5, 6, 8};
enum { N = sizeof(idx) / sizeof(idx[0]) };

static double f_of(const struct data *s, uint32_t r, const float *w)
{
	double f = w[DIM];
	for (uint64_t k = s->start[r]; k < s->start[r + 1]; k++)
		if (s->col[k] < DIM)
			f += (double)w[s->col[k]] * s->val[k];
	return f;
}

/* Whether every row of idx is at least 0.05 away from the hinge's kink. */
static int off_kink(const struct data *s, const float *w)
{
	for (int i = 0; i < N; i++) {
		double y = s->label[idx[i]] > 0 ? 1 : -1;
		if (fabs(y * f_of(s, idx[i], w) - 1) < 0.05)
			return 0;
	}
	return 1;
}

static double loss_at(enum gw_lin_loss l, const struct data *s,
		      const float *w)
{
	float g[DIM + 1] = {0};
	return gw_lin_grad(l, &s->d, idx, N, w, DIM, g);
}

static void check_fd(enum gw_lin_loss l, uint64_t seed)
{
	gw_test_rng r = {seed};
	struct data s;
	float w[DIM + 1];
	make_data(&s, &r);
	int tries = 0;
	do {
		fill_w(w, &r);
		GW_CHECK(++tries < 1000, "no weights away from the kink");
	} while (l == GW_LIN_SVM && !off_kink(&s, w));

	float g[DIM + 1];
	gw_test_fill(g, DIM + 1, 0.25f);        /* added to, not cleared */
	double loss = gw_lin_grad(l, &s.d, idx, N, w, DIM, g);
	GW_CHECK(isfinite(loss) && loss >= 0, "%s: loss %g", gw_lin_loss_name(l),
		 loss);
	GW_CHECK(g[5] == 0.25f, "%s: g[5] (no row has column 5) changed to %g",
		 gw_lin_loss_name(l), g[5]);

	/* w +- h stays exact: w is a multiple of 1/64, h = 2^-12 */
	const float h = 0x1p-12f;
	int active = 0;
	for (int j = 0; j <= DIM; j++) {
		float wp[DIM + 1], wm[DIM + 1];
		memcpy(wp, w, sizeof(wp));
		memcpy(wm, w, sizeof(wm));
		wp[j] += h;
		wm[j] -= h;
		double fd = (loss_at(l, &s, wp) - loss_at(l, &s, wm)) / (2.0 * h);
		double an = (double)g[j] - 0.25;
		GW_CHECK(fabs(an - fd) <= 1e-4 * (1 + fabs(fd)),
			 "%s seed %llu: dloss/dw[%d] = %.8g, central difference "
			 "%.8g", gw_lin_loss_name(l), (unsigned long long)seed, j,
			 an, fd);
		active += fabs(fd) > 1e-3;
	}
	GW_CHECK(active >= 2, "%s: the check must see real gradients",
		 gw_lin_loss_name(l));
}

/* check_fd for seeds 1 to 20. */
static void check_fd_seeds(enum gw_lin_loss l)
{
	for (uint64_t seed = 1; seed <= 20; seed++)
		check_fd(l, seed);
}

static void test_fd_logreg(void **state)
{
	(void)state;
	check_fd_seeds(GW_LIN_LOGREG);
}

static void test_fd_svm(void **state)
{
	(void)state;
	check_fd_seeds(GW_LIN_SVM);
}

static void test_fd_linreg(void **state)
{
	(void)state;
	check_fd_seeds(GW_LIN_LINREG);
}

/* Exact values on one row x = {1: 1}, w = {a}, bias b. */
static void test_hand_values(void **state)
{
	(void)state;
	float lab = -1;
	uint64_t start[2] = {0, 1};
	uint32_t col[1] = {0};
	float val[1] = {1};
	struct gw_svm d = {.rows = 1, .dim = 1, .nnz = 1, .label = &lab,
			   .start = start, .col = col, .val = val};
	uint32_t i0 = 0;
	float w[2] = {0.5f, 0.25f}, g[2] = {0, 0};   /* f = 0.75 */
	double l = gw_lin_grad(GW_LIN_LINREG, &d, &i0, 1, w, 1, g);
	GW_CHECK(fabs(l - 0.5 * 1.75 * 1.75) < 1e-12 && g[0] == 1.75f &&
			 g[1] == 1.75f,
		 "linreg: loss %g g %g %g", l, g[0], g[1]);
	g[0] = g[1] = 0;
	l = gw_lin_grad(GW_LIN_SVM, &d, &i0, 1, w, 1, g);
	GW_CHECK(fabs(l - 1.75) < 1e-12 && g[0] == 1 && g[1] == 1,
		 "svm: loss %g g %g %g", l, g[0], g[1]);
	g[0] = g[1] = 0;
	l = gw_lin_grad(GW_LIN_LOGREG, &d, &i0, 1, w, 1, g);
	double sig = 1 / (1 + exp(-0.75));
	GW_CHECK(fabs(l - log(1 + exp(0.75))) < 1e-12 &&
			 fabs(g[0] - sig) < 1e-7 && fabs(g[1] - sig) < 1e-7,
		 "logreg: loss %g g %g %g", l, g[0], g[1]);

	/* the hinge's kink (y f = 1) has subgradient 0 and loss 0 */
	lab = 1;
	w[0] = 0.75f;                                /* f = 1 */
	g[0] = g[1] = 0;
	l = gw_lin_grad(GW_LIN_SVM, &d, &i0, 1, w, 1, g);
	GW_CHECK(l == 0 && g[0] == 0 && g[1] == 0, "kink: loss %g g %g %g", l,
		 g[0], g[1]);

	/* logistic loss stays finite and exact at huge margins */
	w[0] = 1000;
	w[1] = 0;
	lab = -1;                                    /* y f = -1000 */
	g[0] = g[1] = 0;
	l = gw_lin_grad(GW_LIN_LOGREG, &d, &i0, 1, w, 1, g);
	GW_CHECK(fabs(l - 1000) < 1e-9 && g[0] == 1 && g[1] == 1,
		 "y f = -1000: loss %.17g (want 1000) g %g %g", l, g[0], g[1]);
	lab = 1;                                     /* y f = +1000 */
	g[0] = g[1] = 0;
	l = gw_lin_grad(GW_LIN_LOGREG, &d, &i0, 1, w, 1, g);
	GW_CHECK(l >= 0 && l < 1e-300 && g[0] == 0 && g[1] == 0 && !signbit(l),
		 "y f = +1000: loss %g g %g %g", l, g[0], g[1]);
	w[0] = 40;                                   /* exp(-40) ~ 4e-18 */
	l = gw_lin_grad(GW_LIN_LOGREG, &d, &i0, 1, w, 1, g);
	GW_CHECK(fabs(l / exp(-40.0) - 1) < 1e-9,
		 "y f = 40: loss %.17g, want ~exp(-40) (log1p, not log(1+x))", l);

	/* n == 0: loss 0, g untouched */
	g[0] = g[1] = 3;
	GW_CHECK(gw_lin_grad(GW_LIN_LOGREG, &d, &i0, 0, w, 1, g) == 0 &&
			 g[0] == 3 && g[1] == 3,
		 "n == 0 must return 0 and leave g alone");
}

static void test_eval(void **state)
{
	(void)state;
	/* x in 1D plus an unknown column 3; y = sign(x) */
	float lab[4] = {1, -1, 2, 0};
	uint64_t start[5] = {0, 1, 2, 4, 5};
	uint32_t col[5] = {0, 0, 0, 2, 0};
	float val[5] = {2, -1, 0.5f, 100, -3};
	struct gw_svm d = {.rows = 4, .dim = 3, .nnz = 5, .label = lab,
			   .start = start, .col = col, .val = val};
	float w[2] = {1, 0};
	double loss, acc;
	gw_lin_eval(GW_LIN_SVM, &d, w, 1, &loss, &acc);
	/* margins 2, 1, 0.5, 3 -> hinge 0, 0, 0.5, 0 */
	GW_CHECK(acc == 1 && fabs(loss - 0.125) < 1e-12,
		 "separating w: acc %g loss %g", acc, loss);
	w[0] = -1;
	gw_lin_eval(GW_LIN_SVM, &d, w, 1, &loss, &acc);
	GW_CHECK(acc == 0, "flipped w: acc %g", acc);
	w[0] = 1;
	w[1] = 0.75f;             /* row 1 (x=-1) now at f = -0.25: still right */
	gw_lin_eval(GW_LIN_LINREG, &d, w, 1, &loss, &acc);
	GW_CHECK(acc == 1, "linreg as classifier: acc %g", acc);
	w[1] = -1;                /* row 2 at f = -0.5: wrong */
	gw_lin_eval(GW_LIN_LOGREG, &d, w, 1, &loss, &acc);
	double want = (log1p(exp(-1.0)) + log1p(exp(-2.0)) + log1p(exp(0.5)) +
		       log1p(exp(-4.0))) / 4;
	GW_CHECK(acc == 0.75 && fabs(loss - want) < 1e-12,
		 "logreg: acc %g loss %.12g (want 0.75, %.12g)", acc, loss, want);
}

static void test_loss_names(void **state)
{
	(void)state;
	enum gw_lin_loss l;
	static const enum gw_lin_loss all[] = {GW_LIN_LOGREG, GW_LIN_SVM,
					       GW_LIN_LINREG};
	for (int i = 0; i < 3; i++) {
		GW_OK_CALL(gw_lin_loss_parse(gw_lin_loss_name(all[i]), &l));
		GW_CHECK(l == all[i], "name round trip of loss %d", i);
	}
	GW_CHECK(!strcmp(gw_lin_loss_name(GW_LIN_SVM), "svm"), "svm name");
	GW_EXPECT_RC(gw_lin_loss_parse("hinge", &l), GW_EINVAL, "unknown name");
	GW_EXPECT_RC(gw_lin_loss_parse(NULL, &l), GW_EINVAL, "NULL name");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fd_logreg),
		cmocka_unit_test(test_fd_svm),
		cmocka_unit_test(test_fd_linreg),
		cmocka_unit_test(test_hand_values),
		cmocka_unit_test(test_eval),
		cmocka_unit_test(test_loss_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
