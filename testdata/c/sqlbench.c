/* sqlbench: a driver of SQLite's amalgamation for scripts/bench-fdo.sh
 * (built with sqlite3.c, which the script fetches: it is not in the
 * repository). Each round opens an in-memory database, inserts rows in a
 * transaction through a prepared statement, builds two indexes, runs
 * range queries, a grouping, a join and an update, and closes it.
 *
 * Usage: sqlbench [MS]          run rounds for MS milliseconds of CPU (default 1000)
 *        sqlbench rounds=N      run N rounds, then print the checksum and the
 *                               rounds' CPU time
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sqlite3.h"
#include "cpu_ms.h"

#define ROWS 3000

static void must(int rc, sqlite3 *db, const char *what) {
	if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
		fprintf(stderr, "sqlbench: %s: %s\n", what, sqlite3_errmsg(db));
		exit(1);
	}
}

static void exec(sqlite3 *db, const char *sql) { must(sqlite3_exec(db, sql, 0, 0, 0), db, sql); }

/* sum runs a query with up to two integer parameters and adds up its
 * first column's integers and its rows. */
static long sum(sqlite3 *db, const char *sql, long p1, long p2) {
	sqlite3_stmt *st;
	must(sqlite3_prepare_v2(db, sql, -1, &st, 0), db, sql);
	if (sqlite3_bind_parameter_count(st) >= 1)
		sqlite3_bind_int64(st, 1, p1);
	if (sqlite3_bind_parameter_count(st) >= 2)
		sqlite3_bind_int64(st, 2, p2);
	long s = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		s += sqlite3_column_int64(st, 0) + 1;
	must(rc, db, sql);
	sqlite3_finalize(st);
	return s;
}

static long one_round(unsigned seed) {
	sqlite3 *db;
	must(sqlite3_open(":memory:", &db), db, "open");
	exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, a INT, b TEXT, c REAL)");
	exec(db, "CREATE TABLE u(k INT, v INT)");
	exec(db, "BEGIN");
	sqlite3_stmt *ins;
	must(sqlite3_prepare_v2(db, "INSERT INTO t(a, b, c) VALUES(?, ?, ?)", -1, &ins, 0), db, "prepare insert");
	char name[32];
	for (int i = 0; i < ROWS; i++) {
		seed = seed * 1103515245 + 12345;
		snprintf(name, sizeof name, "name%u", (seed >> 8) % 97);
		sqlite3_bind_int64(ins, 1, (seed >> 4) % 1000);
		sqlite3_bind_text(ins, 2, name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_double(ins, 3, (seed % 10000) / 7.0);
		must(sqlite3_step(ins), db, "insert");
		sqlite3_reset(ins);
	}
	sqlite3_finalize(ins);
	exec(db, "INSERT INTO u SELECT a % 50, id FROM t WHERE id % 3 = 0");
	exec(db, "COMMIT");
	exec(db, "CREATE INDEX ta ON t(a)");
	exec(db, "CREATE INDEX tb ON t(b, c)");
	exec(db, "CREATE INDEX uk ON u(k)");
	long s = 0;
	for (int q = 0; q < 40; q++)
		s += sum(db, "SELECT count(*) + sum(c) FROM t WHERE a BETWEEN ? AND ?", q * 20, q * 20 + 60);
	for (int q = 0; q < 20; q++)
		s += sum(db, "SELECT a FROM t WHERE b = 'name' || ? ORDER BY c LIMIT 20", q, 0);
	s += sum(db, "SELECT count(*) FROM t GROUP BY b ORDER BY 1 DESC", 0, 0);
	s += sum(db, "SELECT sum(t.a) FROM t JOIN u ON u.v = t.id WHERE u.k < ?", 25, 0);
	exec(db, "UPDATE t SET c = c * 2 WHERE a % 7 = 0");
	s += sum(db, "SELECT sum(c) FROM t WHERE b LIKE 'name1%'", 0, 0);
	exec(db, "DELETE FROM t WHERE a < 100");
	s += sum(db, "SELECT count(*) FROM t", 0, 0);
	sqlite3_close(db);
	return s;
}

static double process_cpu(void) {
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
	long rounds = -1, ms = 1000, s = 0;
	if (argc > 1 && strncmp(argv[1], "rounds=", 7) == 0)
		rounds = atol(argv[1] + 7);
	else if (argc > 1)
		ms = atol(argv[1]);
	if (rounds >= 0) {
		double t0 = process_cpu();
		for (long r = 0; r < rounds; r++)
			s += one_round(r);
		printf("checksum %ld cpu %.6f\n", s, process_cpu() - t0);
		return 0;
	}
	long end = cpu_ms() + ms, r = 0;
	while (cpu_ms() < end)
		s += one_round(r++);
	printf("checksum %ld\n", s);
	return 0;
}
