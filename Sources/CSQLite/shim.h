// SQLite 3 (Debian libsqlite3-dev) for recordings. SQLITE_TRANSIENT is a cast macro Swift cannot
// import: text and blobs are bound through these accessors, which copy.
#ifndef PERFHUD_CSQLITE_SHIM_H
#define PERFHUD_CSQLITE_SHIM_H
#include <sqlite3.h>

static inline int perfhud_sqlite_bind_text(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}
#endif
