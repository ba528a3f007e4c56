/* A memif peer that leaves must not take this process with it.
 *
 * When the peer of a memif port goes (exits, is killed), the PMD tears the
 * link down on the EAL's interrupt thread (memif_disconnect): it marks the
 * link down, then unmaps the shared regions that hold the rings and the
 * packet buffers. A burst of ours already inside the PMD on another thread
 * reads or writes those regions after they are gone (a segfault in
 * librte_net_memif, seen once in 16 runs of a job whose workers left, and
 * in testpmd's memif server). DPDK 22.11's PMD raises no event before the
 * unmap, and its burst functions take no lock against it.
 *
 * So the unmap is made to wait for the bursts: at start-up the PMD's own
 * GOT entry for munmap (its only way to unmap) is pointed at
 * guarded_munmap, which waits until no burst of ours is inside a guarded
 * port. A burst enters by counting itself in, then reads the link state;
 * one that finds the link down leaves without touching the PMD. The link
 * is marked down before the unmap, and the count is read after it (both
 * sequentially consistent), so either the unmap sees the burst and waits
 * for it, or the burst sees the link down and keeps out (Dekker's pairing).
 * The wait lasts one burst: microseconds.
 *
 * Only librte_net_memif's own slot is changed (nothing else in the
 * process calls guarded_munmap). A build that links the PMD statically,
 * or a PMD that does not import munmap, gets no guard: opening a memif
 * port then says so once. */
#include <elf.h>
#include <link.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "dpdk_internal.h"

/* The relocations that fill a GOT slot with a function's address. */
#if defined(__x86_64__)
#define SLOT_RELOC(t) ((t) == R_X86_64_JUMP_SLOT || (t) == R_X86_64_GLOB_DAT)
#elif defined(__aarch64__)
#define SLOT_RELOC(t) ((t) == R_AARCH64_JUMP_SLOT || (t) == R_AARCH64_GLOB_DAT)
#else
#define SLOT_RELOC(t) 0   /* no guard: opening a memif port says so */
#endif

_Atomic unsigned gw_dpdk_guard_inside;
static int (*libc_munmap)(void *, size_t) = munmap;
static bool installed, warned;

static int guarded_munmap(void *addr, size_t len)
{
	/* The PMD marked the link down before it came here. */
	atomic_thread_fence(memory_order_seq_cst);
	while (atomic_load(&gw_dpdk_guard_inside))
		sched_yield();
	return libc_munmap(addr, len);
}

/* In-memory dynamic entries are absolute once glibc relocated them, but
 * not on every loader: base-relative ones are below the load address. */
static uintptr_t dyn_addr(const struct dl_phdr_info *info, ElfW(Addr) p)
{
	return p < info->dlpi_addr ? info->dlpi_addr + p : p;
}

/* Points the GOT slot at `at` to repl; the slot lies in RELRO (read-only
 * after start-up) or in writable data. */
static bool patch(const struct dl_phdr_info *info, void **at, void *repl)
{
	uintptr_t page = (uintptr_t)at & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);
	size_t span = (uintptr_t)(at + 1) - page;
	bool relro = false;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_GNU_RELRO && (uintptr_t)at >= lo &&
		    (uintptr_t)at < lo + ph->p_memsz)
			relro = true;
	}
	if (mprotect((void *)page, span, PROT_READ | PROT_WRITE) != 0)
		return false;
	__atomic_store_n(at, repl, __ATOMIC_SEQ_CST);
	if (relro)
		mprotect((void *)page, span, PROT_READ);
	return true;
}

/* Every relocation of the object naming munmap (a PLT slot, or a GOT
 * entry of a -fno-plt build) is pointed at guarded_munmap. */
static int hook_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	int *hooked = arg;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "librte_net_memif"))
		return 0;
	const ElfW(Dyn) *dyn = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return 0;
	const ElfW(Sym) *sym = NULL;
	const char *str = NULL;
	const ElfW(Rela) *tab[2] = {NULL, NULL};
	size_t len[2] = {0, 0};
	for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB: sym = (const ElfW(Sym) *)dyn_addr(info, d->d_un.d_ptr); break;
		case DT_STRTAB: str = (const char *)dyn_addr(info, d->d_un.d_ptr); break;
		case DT_JMPREL: tab[0] = (const ElfW(Rela) *)dyn_addr(info, d->d_un.d_ptr); break;
		case DT_PLTRELSZ: len[0] = d->d_un.d_val; break;
		case DT_RELA: tab[1] = (const ElfW(Rela) *)dyn_addr(info, d->d_un.d_ptr); break;
		case DT_RELASZ: len[1] = d->d_un.d_val; break;
		default: break;
		}
	}
	if (!sym || !str)
		return 0;
	for (int t = 0; t < 2; t++) {
		for (size_t i = 0; tab[t] && i < len[t] / sizeof(ElfW(Rela)); i++) {
			const ElfW(Rela) *r = &tab[t][i];
			uint32_t type = (uint32_t)ELF64_R_TYPE(r->r_info);
			if (!SLOT_RELOC(type))
				continue;
			if (strcmp(str + sym[ELF64_R_SYM(r->r_info)].st_name, "munmap"))
				continue;
			void **slot = (void **)(info->dlpi_addr + r->r_offset);
			if (*slot != (void *)guarded_munmap && patch(info, slot, (void *)guarded_munmap))
				(*hooked)++;
		}
	}
	return 0;
}

void gw_dpdk_guard_install(void)
{
	if (installed)
		return;
	int hooked = 0;
	dl_iterate_phdr(hook_object, &hooked);
	installed = hooked > 0;
}

bool gw_dpdk_guard_installed(void)
{
	return installed;
}

bool gw_dpdk_guard_port(uint16_t port)
{
	struct rte_eth_dev_info info;
	if (rte_eth_dev_info_get(port, &info) != 0 || !info.driver_name ||
	    strcmp(info.driver_name, "net_memif"))
		return false;
	gw_dpdk_guard_install();   /* a PMD loaded after the EAL started */
	if (!installed && !warned) {
		warned = true;
		fprintf(stderr, "gradwire: dpdk: port %u: memif's unmap could not be "
			"guarded (no librte_net_memif with an munmap import in this "
			"process): a peer that leaves mid-burst may crash it\n", port);
	}
	return true;
}

bool gw_dpdk_enter_slow(struct dpdk_dp *d)
{
	atomic_fetch_add(&gw_dpdk_guard_inside, 1);
	struct rte_eth_link link;
	memset(&link, 0, sizeof(link));
	if (rte_eth_link_get_nowait(d->port, &link) == 0 && link.link_status == RTE_ETH_LINK_UP) {
		if (d->was_down) {
			/* Reconnected: the rx interrupt's event fd went with
			 * the old connection; wait() backs off instead. */
			d->was_down = false;
			d->intr = false;
		}
		return true;
	}
	atomic_fetch_sub(&gw_dpdk_guard_inside, 1);
	d->was_down = true;
	return false;
}
