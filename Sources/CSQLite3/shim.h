#ifndef RETRORAPID_CSQLITE3_SHIM_H
#define RETRORAPID_CSQLITE3_SHIM_H

#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer; Swift cannot import it.
// Binding with it makes SQLite copy the bytes before the call returns, so Swift buffers
// never need to outlive the bind call.
static inline sqlite3_destructor_type rr_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

// SQLITE_STATIC (0): SQLite uses the bytes in place, so they must stay valid and unchanged
// until the statement is reset or rebound; for hot loops whose buffer outlives the step.
static inline sqlite3_destructor_type rr_sqlite_static(void) {
    return SQLITE_STATIC;
}

// sqlite3_config is variadic, which Swift cannot call. Memory statistics (on by default) take
// a process-wide mutex on every allocation SQLite makes; nothing here reads them.
// SQLITE_MISUSE when SQLite is already initialised (then it changes nothing).
static inline int rr_sqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

#endif
