/* The engine's shared state (engine.h), defined in a file of its own so that every part of the engine
 * reaches it without depending on main.c. */
#include "engine.h"

struct lr_engine lr;
