#ifndef RETRORAPID_CLIBEV_SHIM_H
#define RETRORAPID_CLIBEV_SHIM_H

// libev, for the one event loop each libwebsockets context runs on (LWSEventLoop): we create
// the loop and hand it to libwebsockets as a "foreign" loop, so that we can stop it
// (ev_break) and so that libwebsockets does not claim SIGINT for it (it does for loops it
// creates, and libev allows one SIGINT watcher per process: a second context aborted).
// Debian's libev-dev ships no pkg-config file; libwebsockets-dev depends on it.
#include <ev.h>

#endif
