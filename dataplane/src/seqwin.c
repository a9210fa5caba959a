/* See seqwin.h. */
#include "seqwin.h"

#include <string.h>

void lr_seqwin_init(struct lr_seqwin *w, uint64_t *bits, uint64_t nbits)
{
	w->bits = bits;
	w->nbits = nbits;
	lr_seqwin_reset(w);
}

void lr_seqwin_reset(struct lr_seqwin *w)
{
	memset(w->bits, 0, w->nbits / 8);
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

/* Forgets positions [from, to) so the window can hold the sequence numbers that now reuse them. */
static void clear_range(struct lr_seqwin *w, uint64_t from, uint64_t to)
{
	if (to - from >= w->nbits) {
		memset(w->bits, 0, w->nbits / 8);
		return;
	}
	for (uint64_t s = from; s < to;) {
		uint64_t i = s & (w->nbits - 1);
		if ((i & 63) == 0 && to - s >= 64) {
			w->bits[i >> 6] = 0;
			s += 64;
		} else {
			w->bits[i >> 6] &= ~(1ull << (i & 63));
			s++;
		}
	}
}

enum lr_seq_class lr_seqwin_add_any(struct lr_seqwin *w, uint64_t seq)
{
	w->rx++;
	if (seq >= w->next) {
		if (seq > w->next) {
			clear_range(w, w->next, seq);
			w->early++;
			if (seq - w->next > w->max_early)
				w->max_early = seq - w->next;
		}
		/* the position seq itself still holds seq - nbits's bit */
		clear_range(w, seq, seq + 1);
		test_and_set(w, seq);
		w->next = seq + 1;
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
