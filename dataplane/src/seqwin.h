/* Sequence analysis of one received stream: a bit per sequence number over a sliding window.
 *
 * Loss itself is not counted here: lost = tx - (rx - duplicates) at the end of the trial is exact and
 * needs no per-frame state. The window tells duplicates from late arrivals and measures reordering.
 * A frame older than the window cannot be classified (counted as beyond_window, treated as new).
 */
#ifndef LR_SEQWIN_H
#define LR_SEQWIN_H

#include <stdbool.h>
#include <stdint.h>

struct lr_seqwin {
	uint64_t *bits;
	uint64_t nbits; /* power of two */
	uint64_t next;  /* highest sequence number seen + 1; 0 when nothing seen */
	uint64_t rx, dup, reordered, beyond, max_late;
	/* early: arrived with a gap before it (frames lost or yet to come); earliness: the gap's length */
	uint64_t early, max_early;
};

enum lr_seq_class { LR_SEQ_IN_ORDER, LR_SEQ_REORDERED, LR_SEQ_DUPLICATE, LR_SEQ_BEYOND };

/* Sets the bits of the numbers from .. to - 1 (nbits_mask: nbits - 1) as lr_seqwin_add sets an in-order
 * number's (each position still holds the number nbits before it: setting it is clearing that and setting
 * this one), a word at a time: a run of in-order frames then costs its receiver nothing per frame here.
 * The window's next and rx are the caller's to move. */
static inline void lr_seqwin_set_range(uint64_t *bits, uint64_t nbits_mask, uint64_t from, uint64_t to)
{
	while (from < to) {
		uint64_t i = from & nbits_mask, take = 64 - (i & 63);
		if (to - from < take)
			take = to - from;
		bits[i >> 6] |= (take == 64 ? ~0ull : (1ull << take) - 1) << (i & 63);
		from += take;
	}
}

/* bits must hold nbits bits (nbits a power of two, at least 64), all zero. */
void lr_seqwin_init(struct lr_seqwin *w, uint64_t *bits, uint64_t nbits);
/* Clears the window for a new trial. Only the words this trial can have set are cleared, and large
 * stretches are handed back to the kernel (they read as zero again), so a window sized for a whole long
 * trial at line rate costs memory only for the frames that arrived, and clearing it costs no more. */
void lr_seqwin_reset(struct lr_seqwin *w);
/* A window of nbits bits in its own anonymous mapping, zero, reserved lazily (pages exist once touched);
 * NULL when it cannot be mapped. */
uint64_t *lr_seqwin_alloc(uint64_t nbits);
void lr_seqwin_free(uint64_t *bits, uint64_t nbits);
/* Every case; lr_seqwin_add takes the common one (the next number, in order) inline. */
enum lr_seq_class lr_seqwin_add_any(struct lr_seqwin *w, uint64_t seq);

static inline enum lr_seq_class lr_seqwin_add(struct lr_seqwin *w, uint64_t seq)
{
	if (__builtin_expect(seq == w->next, 1)) {
		/* the position still holds seq - nbits's bit: setting it is clearing it and setting it */
		uint64_t i = seq & (w->nbits - 1);
		w->bits[i >> 6] |= 1ull << (i & 63);
		__atomic_store_n(&w->next, seq + 1, __ATOMIC_RELEASE); /* after its bit: timeline.c reads below next */
		w->rx++;
		return LR_SEQ_IN_ORDER;
	}
	return lr_seqwin_add_any(w, seq);
}

#endif
