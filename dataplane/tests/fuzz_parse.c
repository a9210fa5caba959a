/* libFuzzer target: the RX parser must classify any byte string without reading outside it. */
#include <stddef.h>
#include <stdint.h>

#include "frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lr_parsed ps;
	if (lr_parse(data, size, &ps) == LR_KIND_NS && ps.nd_lladdr) {
		/* the option pointer must lie inside the frame */
		volatile uint8_t b = ps.nd_lladdr[5];
		(void)b;
	}
	return 0;
}
