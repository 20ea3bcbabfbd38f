#ifndef RETRORAPID_CSQLITE3_SHIM_H
#define RETRORAPID_CSQLITE3_SHIM_H

#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer; Swift cannot import it.
// Binding with it makes SQLite copy the bytes before the call returns, so Swift buffers
// never need to outlive the bind call.
static inline sqlite3_destructor_type rr_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
