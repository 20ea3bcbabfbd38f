#ifndef RETRORAPID_CLIBWEBSOCKETS_SHIM_H
#define RETRORAPID_CLIBWEBSOCKETS_SHIM_H

#include <libwebsockets.h>

// LWS_PRE is a macro: the headroom libwebsockets needs before every payload given to lws_write.
static const size_t rr_lws_pre = LWS_PRE;

// lwsl_* are variadic macros that Swift cannot call; this takes one preformatted line.
static inline void rr_lws_log(int level, const char *line) {
    _lws_log(level, "%s\n", line);
}

#endif
