/* scripts/bench-adaptive.sh's "sqlite": a real program with deep stacks,
 * SQLite's amalgamation (not in the repository: the script fetches it
 * with npm, from better-sqlite3's deps/sqlite3, and builds it) under this
 * driver. Each round opens an in-memory database, inserts rows into two
 * tables in a transaction, builds two indexes, and runs a grouped and a
 * joined query; rounds go on until the process has used the CPU seconds
 * given as its argument (a decimal number; required). Prints the rows
 * inserted (see adaptive_common.h). Build with sqlite3.c:
 *   gcc -O2 -g -fno-omit-frame-pointer -DSQLITE_THREADSAFE=0 \
 *       -DSQLITE_OMIT_LOAD_EXTENSION adaptive_sqlite.c sqlite3.c -lm */
#include <string.h>
#include "adaptive_common.h"
#include "sqlite3.h"

enum { ROWS = 2000 };

static void must(int rc, sqlite3 *db, const char *what) {
	if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
		fprintf(stderr, "adaptive_sqlite: %s: %s\n", what, sqlite3_errmsg(db));
		exit(1);
	}
}

static void exec(sqlite3 *db, const char *sql) { must(sqlite3_exec(db, sql, 0, 0, 0), db, sql); }

/* query runs sql and sums its first column over the rows. */
static long query(sqlite3 *db, const char *sql) {
	sqlite3_stmt *st;
	long sum = 0;
	int rc;
	must(sqlite3_prepare_v2(db, sql, -1, &st, 0), db, sql);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) sum += sqlite3_column_int64(st, 0);
	must(rc, db, sql);
	sqlite3_finalize(st);
	return sum;
}

static long round_(unsigned long *seed) {
	sqlite3 *db;
	sqlite3_stmt *ins1, *ins2;
	char text[24];
	must(sqlite3_open(":memory:", &db), db, "open");
	exec(db, "CREATE TABLE t1(id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c REAL);"
		 "CREATE TABLE t2(id INTEGER PRIMARY KEY, t1id INTEGER, d TEXT);");
	must(sqlite3_prepare_v2(db, "INSERT INTO t1(a, b, c) VALUES(?, ?, ?)", -1, &ins1, 0), db, "insert t1");
	must(sqlite3_prepare_v2(db, "INSERT INTO t2(t1id, d) VALUES(?, ?)", -1, &ins2, 0), db, "insert t2");
	exec(db, "BEGIN");
	for (int i = 0; i < ROWS; i++) {
		*seed = *seed * 6364136223846793005UL + 1442695040888963407UL;
		unsigned long r = *seed >> 20;
		snprintf(text, sizeof text, "name-%lu", r % 5000);
		sqlite3_bind_int64(ins1, 1, (long)(r % 1000));
		sqlite3_bind_text(ins1, 2, text, -1, SQLITE_TRANSIENT);
		sqlite3_bind_double(ins1, 3, (double)(r % 100000) / 7);
		must(sqlite3_step(ins1), db, "insert t1");
		sqlite3_reset(ins1);
		sqlite3_bind_int64(ins2, 1, (long)(r % ROWS) + 1);
		sqlite3_bind_text(ins2, 2, text + 5, -1, SQLITE_TRANSIENT);
		must(sqlite3_step(ins2), db, "insert t2");
		sqlite3_reset(ins2);
	}
	exec(db, "COMMIT");
	sqlite3_finalize(ins1);
	sqlite3_finalize(ins2);
	exec(db, "CREATE INDEX t1a ON t1(a, b)");
	exec(db, "CREATE INDEX t2t1 ON t2(t1id)");
	long acc = query(db, "SELECT count(*) FROM (SELECT a % 97, count(*), sum(c), max(b) FROM t1 GROUP BY a % 97)");
	acc += query(db, "SELECT count(*) FROM t1 JOIN t2 ON t2.t1id = t1.id WHERE t1.a < 500 AND t2.d > '2'");
	acc += query(db, "SELECT sum(length(t2.d)) FROM t2 JOIN t1 ON t1.id = t2.t1id GROUP BY t1.a ORDER BY 1 DESC LIMIT 5");
	sqlite3_close(db);
	return acc;
}

int main(int argc, char **argv) {
	double limit = atof(argv[1]);
	unsigned long seed = 42;
	long work = 0, acc = 0;
	while (pcpu() < limit) {
		acc += round_(&seed);
		work += ROWS;
	}
	done(work);
	return acc == 42;
}
