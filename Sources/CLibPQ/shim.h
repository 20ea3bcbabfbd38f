#ifndef RETRORAPID_CLIBPQ_SHIM_H
#define RETRORAPID_CLIBPQ_SHIM_H

// PostgreSQL's client library (Debian's libpq-dev). Only RetroRapidPostgreSQL imports it.
#include <libpq-fe.h>

#endif
