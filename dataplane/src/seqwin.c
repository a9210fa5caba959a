/* See seqwin.h. */
#include "seqwin.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

uint64_t *lr_seqwin_alloc(uint64_t nbits)
{
	void *p = mmap(NULL, nbits / 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void lr_seqwin_free(uint64_t *bits, uint64_t nbits)
{
	if (bits)
		munmap(bits, nbits / 8);
}

/* Zeroes words [from, to). Whole pages of a large stretch go back to the kernel instead of being
 * written: writing zeros would make every page of a window sized for 600 s at line rate resident. A
 * window that is not its own mapping (a test's array) is small and only ever written. */
#define LR_SEQWIN_MADVISE_BYTES (1u << 20)
static void zero_words(uint64_t *bits, uint64_t from, uint64_t to)
{
	if (to <= from)
		return;
	uint8_t *a = (uint8_t *)(bits + from), *b = (uint8_t *)(bits + to);
	if ((size_t)(b - a) >= LR_SEQWIN_MADVISE_BYTES) {
		uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
		uint8_t *pa = (uint8_t *)(((uintptr_t)a + page - 1) & ~(page - 1));
		uint8_t *pb = (uint8_t *)((uintptr_t)b & ~(page - 1));
		if (madvise(pa, (size_t)(pb - pa), MADV_DONTNEED) == 0) {
			memset(a, 0, (size_t)(pa - a));
			memset(pb, 0, (size_t)(b - pb));
			return;
		}
	}
	memset(a, 0, (size_t)(b - a));
}

/* The words that can hold a set bit: every bit set belongs to a sequence number below next. */
static uint64_t words_in_use(const struct lr_seqwin *w)
{
	uint64_t words = w->nbits / 64;
	return w->next >= w->nbits ? words : (w->next + 63) / 64;
}

void lr_seqwin_init(struct lr_seqwin *w, uint64_t *bits, uint64_t nbits)
{
	w->bits = bits;
	w->nbits = nbits;
	w->next = 0; /* nothing in use: the reset writes no bit */
	lr_seqwin_reset(w);
}

void lr_seqwin_reset(struct lr_seqwin *w)
{
	zero_words(w->bits, 0, words_in_use(w));
	w->next = 0;
	w->rx = w->dup = w->reordered = w->beyond = w->max_late = w->early = w->max_early = 0;
}

static inline bool test_and_set(struct lr_seqwin *w, uint64_t seq)
{
	uint64_t i = seq & (w->nbits - 1);
	uint64_t m = 1ull << (i & 63);
	bool was = w->bits[i >> 6] & m;
	w->bits[i >> 6] |= m;
	return was;
}

static inline void clear_bit(struct lr_seqwin *w, uint64_t seq)
{
	uint64_t i = seq & (w->nbits - 1);
	w->bits[i >> 6] &= ~(1ull << (i & 63));
}

/* Forgets positions [from, to) so the window can hold the sequence numbers that now reuse them.
 * from >= next: a number below nbits has never had its position used before (every bit set belongs to a
 * number below next), so only the numbers from nbits on need clearing, and a long gap early in a trial
 * writes nothing. */
static void clear_range(struct lr_seqwin *w, uint64_t from, uint64_t to)
{
	if (from < w->nbits)
		from = to < w->nbits ? to : w->nbits;
	if (to <= from)
		return;
	if (to - from >= w->nbits) {
		zero_words(w->bits, 0, words_in_use(w));
		return;
	}
	for (; from < to && (from & 63); from++)
		clear_bit(w, from);
	/* whole words, wrapping round the end of the window at most once */
	uint64_t words = (to - from) / 64, nw = w->nbits / 64, first = (from & (w->nbits - 1)) >> 6;
	uint64_t head = words < nw - first ? words : nw - first;
	zero_words(w->bits, first, first + head);
	zero_words(w->bits, 0, words - head);
	for (from += words * 64; from < to; from++)
		clear_bit(w, from);
}

enum lr_seq_class lr_seqwin_add_any(struct lr_seqwin *w, uint64_t seq)
{
	w->rx++;
	if (seq >= w->next) {
		if (seq > w->next) {
			w->early++;
			if (seq - w->next > w->max_early)
				w->max_early = seq - w->next;
		}
		/* the positions of the gap and of seq itself still hold the bits of numbers nbits before */
		clear_range(w, w->next, seq + 1);
		test_and_set(w, seq);
		__atomic_store_n(&w->next, seq + 1, __ATOMIC_RELEASE);
		return LR_SEQ_IN_ORDER;
	}
	uint64_t late = w->next - 1 - seq;
	if (w->next - seq > w->nbits) {
		w->beyond++;
		return LR_SEQ_BEYOND;
	}
	if (test_and_set(w, seq)) {
		w->dup++;
		return LR_SEQ_DUPLICATE;
	}
	w->reordered++;
	if (late > w->max_late)
		w->max_late = late;
	return LR_SEQ_REORDERED;
}
