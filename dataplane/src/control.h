/* The control socket (control.c, PROTOCOL.md): main.c serves it on the main lcore once the workers run. */
#ifndef LR_CONTROL_H
#define LR_CONTROL_H

void lr_control_serve(const char *addr);

#endif
