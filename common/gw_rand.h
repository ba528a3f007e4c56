/* SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014): the one seeded generator of gradwire, its
 * tests and its apps. Private to gradwire.
 *
 * Its streams are part of the wire format (terngrad's draws and
 * DeepReduce's, docs/wire-format.md, are specified to the bit as this
 * generator) and of every recorded result that names a seed: the
 * constants and the seeding never change. */
#ifndef GW_RAND_H
#define GW_RAND_H

#include <stdint.h>

/* The golden-ratio increment of the state. */
#define GW_SPLITMIX_GAMMA 0x9e3779b97f4a7c15ull

/* SplitMix64's output function: a bijection that mixes every bit of z
 * into every bit of the result. Applied to state + (i + 1) * gamma it is
 * the (i + 1)-th draw of the stream from state, so counter-based users
 * call it directly. */
static inline uint64_t gw_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The next draw of the stream whose state is *state (any value seeds it). */
static inline uint64_t gw_splitmix64(uint64_t *state)
{
	return gw_mix64(*state += GW_SPLITMIX_GAMMA);
}

#endif
