/* A stream's TX lanes (engine.h: one per queue of its TX port, each sent by that queue's worker): set up
 * before a trial, and their counts summed for RESULT. */
#include <string.h>

#include "txq.h"
#include "engine.h"

void lr_txq_reset(struct lr_stream *s, unsigned lanes, uint64_t burst)
{
	s->lanes = lanes;
	s->warm_sent = 0;
	for (unsigned k = 0; k < LR_MAX_QUEUES; k++) {
		struct lr_txq *x = &s->txq[k];
		/* what a build takes is the lane's to keep learning over trials */
		uint64_t b0 = x->build_tsc[0], b1 = x->build_tsc[1];
		memset(x, 0, sizeof(*x));
		x->build_tsc[0] = b0;
		x->build_tsc[1] = b1;
		x->seq = (uint64_t)k << LR_LANE_SHIFT;
		x->pos = (uint32_t)lr_mod(x->seq, s->cycle_len, &s->cycle_div);
		x->flow = (uint32_t)lr_mod(x->seq, s->flows, &s->flows_div);
		x->burst_left = k < lanes ? lr_lane_share(burst, k, lanes) : 0;
	}
}

/* The lag is the longest any lane fell behind, in time: a lane's frames are lanes / fps apart. The peak
 * adds the lanes' peaks, whose 1 ms windows need not coincide: at most the stream's peak, never below it. */
void lr_txq_merge(const struct lr_stream *s, struct lr_tx_sum *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (unsigned k = 0; k < s->lanes; k++) {
		const struct lr_txq *x = &s->txq[k];
		sum->tx_frames += x->tx_frames;
		sum->restamped += x->restamped;
		sum->rx_too_big += x->rx_too_big;
		if (x->too_big_mtu != 0 && (sum->too_big_mtu == 0 || x->too_big_mtu < sum->too_big_mtu))
			sum->too_big_mtu = x->too_big_mtu;
		sum->tx_bytes += x->tx_bytes;
		if (x->tx_frames && (sum->first_tsc == 0 || x->tx_first_tsc < sum->first_tsc))
			sum->first_tsc = x->tx_first_tsc;
		if (x->tx_last_tsc > sum->last_tsc)
			sum->last_tsc = x->tx_last_tsc;
		uint64_t lag = s->fps > 0 && x->max_backlog > 1 ? (uint64_t)((double)(x->max_backlog - 1) * 1e9 * s->lanes / s->fps)
								: 0;
		if (lag > sum->lag_ns)
			sum->lag_ns = lag;
		sum->peak_fps += (x->peak_win_frames > x->win_frames ? x->peak_win_frames : x->win_frames) * 1000ULL;
	}
}

/* Lane k sent the numbers k << LR_LANE_SHIFT | 0 .. tx_frames - 1 (the PMD takes a burst's frames in
 * order): the size cycle from that first number's place in it on. */
uint64_t lr_txq_class_tx(const struct lr_stream *s, unsigned c)
{
	uint64_t per_cycle = 0, total = 0;
	if (s->cycle_len == 0) /* an undefined stream */
		return 0;
	for (uint32_t i = 0; i < s->cycle_len; i++)
		per_cycle += s->cycle_class[i] == c;
	for (unsigned k = 0; k < s->lanes; k++) {
		const struct lr_txq *x = &s->txq[k];
		uint64_t n = x->tx_frames, rem = n % s->cycle_len;
		uint64_t off = ((uint64_t)k << LR_LANE_SHIFT) % s->cycle_len;
		total += n / s->cycle_len * per_cycle;
		for (uint64_t j = 0; j < rem; j++)
			total += s->cycle_class[(off + j) % s->cycle_len] == c;
	}
	return total;
}
