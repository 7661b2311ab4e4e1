// The floor of a recording row: what SQLite alone costs to keep one tick of `perfhud demo --record`,
// with nothing of perfhud around it. The same `sample_log` (86 columns, the demo's values: 54
// integers, 5 reals, 27 NULLs), a frame row per tick as the demo's 60 FPS give at 10 ms (0.6; one
// every other tick here), the same pragmas (8 KiB pages, WAL, synchronous=NORMAL), the same batching
// (rows kept, written 32 to an `INSERT … VALUES (…),(…)` — 16 for frames — at a commit every 100
// rows, i.e. once a second at a 10 ms tick), through one prepared statement each, reused.
//
//   recording_floor FILE ROWS [ROWS_PER_INSERT [packed]]     (default 32; 1: one INSERT a row)
//
// `packed`: the other layout measured, a row as two columns (t_ms, and the 85 other values as one
// JSON array text, which a view could take apart with json_extract): what SQLite would cost if a row
// were one value, with the text formatted every row by the tightest loop (digits into a buffer; the
// demo's reals are whole numbers, written as integers).
//
// Instructions per row: run it under callgrind with two ROWS and divide the difference
// (Benchmarks/tick_cost.py does: floor.recording_row). Build: cc -O2 -o recording_floor recording_floor.c -lsqlite3
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define COLUMNS 86
#ifndef FRAME_ROWS_PER_INSERT
#define FRAME_ROWS_PER_INSERT 16
#endif
#define ROWS_PER_COMMIT 100

static const char *schema =
    "CREATE TABLE sample_log(t_ms INTEGER NOT NULL, alive INTEGER, events INTEGER, phase_id INTEGER, "
    "frame_source INTEGER, command_id INTEGER, rejected_reasons TEXT, wall_skew_ms INTEGER, busiest_threads TEXT, "
    "gpu_name_id INTEGER, cpu_centi INTEGER, cpu_user_centi INTEGER, cpu_system_centi INTEGER, rss_bytes INTEGER, "
    "pss_bytes INTEGER, vsize_bytes INTEGER, threads INTEGER, fps_centi INTEGER, p50_us INTEGER, p95_us INTEGER, "
    "p99_us INTEGER, janky REAL, dropped REAL, aps_centi INTEGER, received INTEGER, malformed INTEGER, "
    "rejected INTEGER, ignored INTEGER, frames_total REAL, actions_total REAL, frames_unreported INTEGER, "
    "latency_p50_us INTEGER, latency_p99_us INTEGER, rss_trend REAL, processes INTEGER, cpu_total_us INTEGER, "
    "cpu_wait_centi INTEGER, cs_voluntary_centi INTEGER, cs_involuntary_centi INTEGER, faults_minor_centi INTEGER, "
    "faults_major_centi INTEGER, io_read_bytes INTEGER, io_write_bytes INTEGER, io_read_chars INTEGER, "
    "io_write_chars INTEGER, fds_open INTEGER, fds_limit INTEGER, rss_anon_bytes INTEGER, rss_file_bytes INTEGER, "
    "rss_shmem_bytes INTEGER, swap_bytes INTEGER, throttled_centi INTEGER, psi_cpu_some_centi INTEGER, "
    "psi_cpu_full_centi INTEGER, psi_memory_some_centi INTEGER, psi_memory_full_centi INTEGER, "
    "psi_io_some_centi INTEGER, psi_io_full_centi INTEGER, rss_trend_per_hour INTEGER, rss_trend_r2_milli INTEGER, "
    "leak_suspected INTEGER, oom_score INTEGER, gpu_deci INTEGER, gpu_memory_bytes INTEGER, "
    "gpu_memory_busy_deci INTEGER, gpu_encoder_deci INTEGER, gpu_decoder_deci INTEGER, gpu_device_deci INTEGER, "
    "gpu_device_memory_used_bytes INTEGER, gpu_device_memory_total_bytes INTEGER, gpu_temperature INTEGER, "
    "gpu_power_mw INTEGER, gpu_clock_mhz INTEGER, gpu_throttle_reasons INTEGER, gpu_unreported INTEGER, "
    "net_tx_rate INTEGER, net_rx_rate INTEGER, net_tx_total INTEGER, net_rx_total INTEGER, tcp_connections INTEGER, "
    "tcp_retrans_centi INTEGER, tcp_retrans_total INTEGER, tcp_retrans_share_centi INTEGER, tcp_rtt_us INTEGER, "
    "net_source INTEGER, net_unreported INTEGER);"
    "CREATE TABLE frame_log(t_ms INTEGER NOT NULL, us INTEGER NOT NULL, source INTEGER, weight REAL);";

// A row of the demo as perfhud recorded it (sqlite3 FILE 'select * from sample_log limit 150,1'):
// 'i' an integer, 'r' a real, 'n' NULL.
static const char kinds[COLUMNS + 1] = "iiiiinninniiiiiiiiiiirriiiiirr" "nnnriiiiiiiiiiiiiiiiiinnnnnnii" "iinnnnnnnnnnnniiiiiiiiinin";
static const double values[COLUMNS] = {
    1504, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1020, 1020, 0, 6070272, 2492416, 163098624, 3, 6000, 16744, 17516,
    17742, 0.0, 0.0, 0, 83, 0, 0, 0, 82.0, 0.0, 0, 0, 0, 5461.0, 1, 152476, 0, 16499, 1200, 0, 0, 0, 0, 0, 0,
    6, 20000, 430080, 5640192, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4764905, 167, 0, 666, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0};

static int packed;
// The rows' texts until their INSERT has run (bound without a copy, as perfhud would keep them).
static char packedText[128][1024];
static int packedLength[128];

static char *digits(char *out, long long value) {
    char reversed[24];
    int count = 0;
    unsigned long long magnitude = value < 0 ? -(unsigned long long)value : (unsigned long long)value;
    if (value < 0) *out++ = '-';
    do { reversed[count++] = (char)('0' + magnitude % 10); magnitude /= 10; } while (magnitude);
    while (count) *out++ = reversed[--count];
    return out;
}

// The row's values but t_ms as a JSON array, into packedText[slot].
static void pack(int slot) {
    char *end = packedText[slot];
    *end++ = '[';
    for (int column = 1; column < COLUMNS; column++) {
        if (column > 1) *end++ = ',';
        if (kinds[column] == 'n') { memcpy(end, "null", 4); end += 4; } else end = digits(end, (long long)values[column]);
    }
    *end++ = ']';
    packedLength[slot] = (int)(end - packedText[slot]);
}

static void check(sqlite3 *db, int result, const char *what) {
    if (result != SQLITE_OK && result != SQLITE_DONE && result != SQLITE_ROW) {
        fprintf(stderr, "%s: %s\n", what, sqlite3_errmsg(db));
        exit(70);
    }
}

static sqlite3_stmt *prepare(sqlite3 *db, const char *table, int width, int rows) {
    size_t size = 64 + (size_t)rows * (2 * width + 3);
    char *sql = malloc(size), *end = sql + sprintf(sql, "INSERT INTO %s VALUES ", table);
    for (int row = 0; row < rows; row++) {
        *end++ = row ? ',' : ' ';
        *end++ = '(';
        for (int column = 0; column < width; column++) { if (column) *end++ = ','; *end++ = '?'; }
        *end++ = ')';
    }
    *end = 0;
    sqlite3_stmt *statement;
    check(db, sqlite3_prepare_v2(db, sql, -1, &statement, NULL), "prepare");
    free(sql);
    return statement;
}

// Binds the kept rows first..<first+count of the sample table to `statement` and steps it once.
static void write_samples(sqlite3 *db, sqlite3_stmt *statement, long first, int count) {
    sqlite3_reset(statement);
    int index = 0;
    if (packed) {
        for (int row = 0; row < count; row++) {
            pack(row);   // perfhud would format it at the tick; the same work
            check(db, sqlite3_bind_int64(statement, ++index, (first + row) * 10), "bind");
            check(db, sqlite3_bind_text(statement, ++index, packedText[row], packedLength[row], SQLITE_STATIC), "bind");
        }
        check(db, sqlite3_step(statement), "step");
        return;
    }
    for (int row = 0; row < count; row++) {
        for (int column = 0; column < COLUMNS; column++) {
            index++;
            switch (kinds[column]) {
            case 'i': check(db, sqlite3_bind_int64(statement, index, column == 0 ? (first + row) * 10 : (sqlite3_int64)values[column]), "bind"); break;
            case 'r': check(db, sqlite3_bind_double(statement, index, values[column]), "bind"); break;
            default: check(db, sqlite3_bind_null(statement, index), "bind");
            }
        }
    }
    check(db, sqlite3_step(statement), "step");
}

static void write_frames(sqlite3 *db, sqlite3_stmt *statement, long first, int count) {
    sqlite3_reset(statement);
    int index = 0;
    for (int row = 0; row < count; row++) {
        check(db, sqlite3_bind_int64(statement, ++index, (first + row) * 20), "bind");
        check(db, sqlite3_bind_int64(statement, ++index, 16667), "bind");
        check(db, sqlite3_bind_int64(statement, ++index, 0), "bind");
        check(db, sqlite3_bind_null(statement, ++index), "bind");   // weight: NULL for the common 1
    }
    check(db, sqlite3_step(statement), "step");
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s FILE ROWS [ROWS_PER_INSERT]\n", argv[0]); return 64; }
    if (strlen(kinds) != COLUMNS) { fprintf(stderr, "kinds: %zu columns\n", strlen(kinds)); return 70; }
    const char *path = argv[1];
    long rows = atol(argv[2]);
    int batch = argc > 3 ? atoi(argv[3]) : 32;
    if (batch < 1 || batch > 128) { fprintf(stderr, "ROWS_PER_INSERT: 1 to 128\n"); return 64; }
    packed = argc > 4 && strcmp(argv[4], "packed") == 0;
    char name[4096];
    for (const char *suffix = ""; suffix; suffix = *suffix ? (suffix[1] == 'w' ? "-shm" : NULL) : "-wal") {
        snprintf(name, sizeof name, "%s%s", path, suffix);
        unlink(name);
    }
    sqlite3 *db;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) return 73;
    check(db, sqlite3_exec(db, "PRAGMA page_size=8192; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; BEGIN;", 0, 0, 0), "pragmas");
    check(db, sqlite3_exec(db, packed ? "CREATE TABLE sample_log(t_ms INTEGER NOT NULL, v TEXT);"
                                        "CREATE TABLE frame_log(t_ms INTEGER NOT NULL, us INTEGER NOT NULL, source INTEGER, weight REAL);" : schema,
                           0, 0, 0), "schema");
    int width = packed ? 2 : COLUMNS;
    sqlite3_stmt *one = prepare(db, "sample_log", width, 1), *many = prepare(db, "sample_log", width, batch);
    sqlite3_stmt *frame = prepare(db, "frame_log", 4, 1), *frames = prepare(db, "frame_log", 4, FRAME_ROWS_PER_INSERT);
    check(db, sqlite3_exec(db, "COMMIT; BEGIN;", 0, 0, 0), "commit");
    long written = 0, framesWritten = 0;
    for (long row = 1; row <= rows; row++) {
        // At the commit (once a second: every 100 rows at 10 ms) the rows kept are written.
        if (row % ROWS_PER_COMMIT == 0 || row == rows) {
            while (row - written >= batch) { write_samples(db, many, written, batch); written += batch; }
            while (written < row) { write_samples(db, one, written, 1); written++; }
            long frameCount = row / 2;
            while (frameCount - framesWritten >= FRAME_ROWS_PER_INSERT) {
                write_frames(db, frames, framesWritten, FRAME_ROWS_PER_INSERT); framesWritten += FRAME_ROWS_PER_INSERT;
            }
            while (framesWritten < frameCount) { write_frames(db, frame, framesWritten, 1); framesWritten++; }
            check(db, sqlite3_exec(db, "COMMIT; BEGIN;", 0, 0, 0), "commit");
        }
    }
    check(db, sqlite3_exec(db, "COMMIT;", 0, 0, 0), "commit");
    sqlite3_finalize(one); sqlite3_finalize(many); sqlite3_finalize(frame); sqlite3_finalize(frames);
    sqlite3_close(db);
    return 0;
}
