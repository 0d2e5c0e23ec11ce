package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/wfbench/wfb/internal/shellword"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Errors that callers classify with errors.Is.
var (
	// ErrSchemaTooNew says the file was written by a newer wfb; it is
	// refused and left untouched.
	ErrSchemaTooNew = errors.New("results file schema is newer than this wfb")
	// ErrSchemaTooOld says a read-only open found a file that needs
	// migrating, which only a write open does.
	ErrSchemaTooOld = errors.New("results file schema is older than this wfb")
	// ErrNoSuchFile says a results file that must already exist does not:
	// OpenReadOnly and OpenExisting never create one. The error also wraps
	// the fs.ErrNotExist that found it.
	ErrNoSuchFile = errors.New("no such file")
	// ErrNotResultsFile says the file is not SQLite, or is SQLite but was not
	// written by wfb.
	ErrNotResultsFile = errors.New("not a wfb results file")
	// ErrCorrupt says the file is a damaged SQLite database (truncated, or
	// pages overwritten), found at open or by a later query.
	ErrCorrupt = errors.New("the results file is damaged (truncated or corrupt)")
	// ErrMigrationRefused says a file could not be upgraded because it holds
	// rows a newer schema's rules refuse; it was left at its old version.
	ErrMigrationRefused = errors.New("the results file cannot be upgraded")
	// ErrReadOnly says the engine refused a write on a read-only handle.
	ErrReadOnly = errors.New("the results file is opened read-only")
	// ErrBadQuery says SQLite rejected a query (syntax, unknown table or
	// column, and the like).
	ErrBadQuery = errors.New("bad query")
	// ErrNotFound says a run or result does not exist.
	ErrNotFound = errors.New("not found")
	// ErrDuplicateAttempt says an attempt id is already recorded; results
	// are append-only and never overwritten.
	ErrDuplicateAttempt = errors.New("attempt already recorded")
)

// busyTimeoutMS is how long a connection waits for another writer's lock
// before failing with SQLITE_BUSY. Sweeps with many workers write often, so
// this is generous.
const busyTimeoutMS = 10000

// DB is an open results file.
type DB struct {
	db        *sql.DB
	path      string
	readOnly  bool
	immutable bool     // see Immutable
	tampered  []string // see Tampered
	secrets   secretSet
	stmts     map[string]*sql.Stmt // the writer's prepared inserts (see prepareInserts)
	hold      *hold                // its process's locks on the file (see holdFile)
	// migratedFrom is the schema version the writer's open found the file
	// at, before migrating it (0 for a new file).
	migratedFrom int
}

// migration is one embedded schema step. Its SQL is read when it is
// applied: a file already at the newest version needs only the names.
type migration struct {
	version int
	name    string
}

// sql is the migration's SQL.
func (m migration) sql() (string, error) {
	b, err := migrationFS.ReadFile("migrations/" + m.name + ".sql")
	return string(b), err
}

// migrations returns the embedded migrations in version order, read and
// checked once per process (each open asks for them, SchemaVersion too).
// Callers must not change the slice.
var migrations = sync.OnceValues(readMigrations)

// readMigrations reads the embedded migrations. File names are
// NNNN_name.sql; the number is the version.
func readMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		if !ok || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("migration %s: name is not NNNN_name.sql", e.Name())
		}
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: bad version %q", e.Name(), num)
		}
		ms = append(ms, migration{version: v, name: strings.TrimSuffix(e.Name(), ".sql")})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d", m.name, i+1)
		}
	}
	return ms, nil
}

// SchemaVersion is the newest schema this binary knows.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		// The embedded set is fixed at build time and checked by tests.
		panic(fmt.Sprintf("store: embedded migrations: %v", err))
	}
	return ms[len(ms)-1].version
}

// fileURI builds a SQLite URI for path with the given query. The URI form
// (rather than a bare name) is what makes SQLite honour mode=ro, and escaping
// keeps a '?' or '#' in a file name from being read as a parameter.
func fileURI(path string, params []string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), OmitHost: false}
	return u.String() + "?" + strings.Join(params, "&"), nil
}

// writerParams are applied by the driver to every new connection, in the
// order given: busy_timeout first. None of them writes to the file: the
// writer's open reads the file's schema version on its connection before
// anything is written (see openAndMigrate), and only then switches the
// journal to WAL, which is a write (a file's header records it, so every
// later connection to the file is in WAL mode too).
var writerParams = []string{
	"_pragma=busy_timeout(" + strconv.Itoa(busyTimeoutMS) + ")",
	"_pragma=foreign_keys(1)",
	"_pragma=synchronous(NORMAL)",
	// BEGIN IMMEDIATE takes the write lock up front; a deferred transaction
	// that later upgrades can fail with SQLITE_BUSY without waiting.
	"_txlock=immediate",
}

var readerParams = []string{
	"mode=ro",
	"_pragma=busy_timeout(" + strconv.Itoa(busyTimeoutMS) + ")",
	"_pragma=query_only(1)",
}

// Open opens the results file at path for writing, creating it if absent,
// and migrates it to the newest schema. A file written by a newer wfb is
// refused with ErrSchemaTooNew and left byte-for-byte untouched; a file that
// is not a wfb results file is refused with ErrNotResultsFile. A new file
// appears at path with its whole schema (see create): a reader never finds
// it half made.
func Open(ctx context.Context, path string) (*DB, error) {
	return openWriter(ctx, path, writerParams)
}

// Upgrade migrates the existing results file at path to the newest schema
// in place, as every writer's open does, and says from which version to
// which (equal when it was current). It takes the writer's hold on the
// file like every writer (see holdFile), so it waits for no one and
// refuses with ErrInUse while another name of the file is in use. A
// missing file is ErrNoSuchFile, a newer one ErrSchemaTooNew (untouched),
// one holding rows a newer rule refuses ErrMigrationRefused (left at its
// version), and one in a place it cannot write ErrReadOnly.
func Upgrade(ctx context.Context, path string) (from, to int, err error) {
	if err := mustExist(path); err != nil {
		return 0, 0, err
	}
	if err := writable(path); err != nil {
		return 0, 0, err
	}
	d, err := OpenExisting(ctx, path)
	if err != nil {
		return 0, 0, err
	}
	from = d.migratedFrom
	return from, SchemaVersion(), d.Close()
}

// writable refuses with ErrReadOnly a file this process cannot write, or
// whose directory it cannot write (where SQLite makes the -wal and -shm),
// before SQLite says only "attempt to write a readonly database".
func writable(path string) error {
	for _, p := range []string{path, filepath.Dir(path)} {
		if err := unix.Access(p, unix.W_OK); err != nil {
			return fmt.Errorf("upgrade %s: cannot write %s (%v); copy the file somewhere writable and upgrade the copy: %w", path, p, err, ErrReadOnly)
		}
	}
	return nil
}

// OpenExisting opens the results file at path for writing, as Open does,
// but only if it exists: a missing file is refused with ErrNoSuchFile
// rather than created. It is for commands that add to a file the user
// names (rescore adds scores to a recorded run), where a mistyped path must
// not be answered with a fresh, empty file. An older file is migrated.
func OpenExisting(ctx context.Context, path string) (*DB, error) {
	if err := mustExist(path); err != nil {
		return nil, err
	}
	// mode=rw opens without SQLITE_OPEN_CREATE: should the file vanish
	// after the check, the engine refuses instead of creating it.
	return openWriter(ctx, path, slices.Concat([]string{"mode=rw"}, writerParams))
}

// openWriter opens path for writing with the DSN params given (see Open).
// The file's writer hold (see holdFile) is taken before SQLite opens it:
// a writer refused for another name of the file in use must not have
// opened it, which would make the second -wal the hold exists to prevent.
func openWriter(ctx context.Context, path string, params []string) (*DB, error) {
	var made os.FileInfo // the empty file made in place, removed on failure
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return nil, notADirectory(path)
	case err == nil:
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("open results %s: %w", path, err)
	case slices.Contains(params, "mode=rw"):
		return nil, mustExist(path)
	default:
		inPlace, err := create(ctx, path)
		if err != nil {
			return nil, err
		}
		if inPlace {
			if made, err = makeEmpty(path); err != nil {
				return nil, err
			}
		}
	}
	h, err := holdFile(path, true)
	if err != nil {
		removeMade(path, made)
		return nil, err
	}
	d, err := openHeld(ctx, path, params)
	if err != nil {
		h.close()
		removeMade(path, made)
		return nil, err
	}
	d.hold = h
	return d, nil
}

// openHeld opens the existing file at path for writing, its hold taken.
// The writer's own connection reads the file's schema version before it
// writes anything (see openAndMigrate), unless opening the file for writing
// would itself change it (see changedByOpening): then a read-only handle
// inspects it first, since a refused file must never see a write.
func openHeld(ctx context.Context, path string, params []string) (*DB, error) {
	if changedByOpening(path) {
		v, err := probeVersion(ctx, path)
		if err != nil {
			return nil, err
		}
		if known := SchemaVersion(); v > known {
			return nil, tooNew(path, v, known)
		}
	}
	d, err := openAndMigrate(ctx, path, path, params, true)
	if err != nil {
		return nil, err
	}
	if err := d.prepareInserts(ctx); err != nil {
		d.db.Close()
		return nil, err
	}
	return d, nil
}

// changedByOpening says whether SQLite would write to the file at path
// merely by opening it for writing and reading it: a -wal beside it holding
// changes not yet in the file (the checkpoint when the last connection
// closes moves them in), or a rollback journal beside it (a hot one is
// rolled back into the file at the first read). Files wfb closed have
// neither; one a writer left when it was killed may.
func changedByOpening(path string) bool {
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return true
	}
	_, err := os.Lstat(path + "-journal")
	return !errors.Is(err, fs.ErrNotExist)
}

// openAndMigrate opens file as the writer with the DSN params given, reads
// its schema version, refusing a file that is not a wfb results file or
// that a newer wfb wrote before anything is written to it, switches it to
// WAL (when wal is set) and migrates it; errors name the results file as
// the user gave it, name.
func openAndMigrate(ctx context.Context, name, file string, params []string, wal bool) (*DB, error) {
	dsn, err := fileURI(file, params)
	if err != nil {
		return nil, fmt.Errorf("open results %s: %w", name, err)
	}
	sdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open results %s: %w", name, err)
	}
	// One writer connection: SQLite allows one writer at a time anyway, and
	// queueing in database/sql is cheaper than retrying SQLITE_BUSY.
	sdb.SetMaxOpenConns(1)
	d := &DB{db: sdb, path: name}
	if err := sdb.PingContext(ctx); err != nil {
		sdb.Close()
		if ferr := fileError(name, err); ferr != nil {
			return nil, ferr
		}
		return nil, fmt.Errorf("open results %s: %w", name, d.classify(err))
	}
	v, err := schemaVersion(ctx, sdb, name)
	if err != nil {
		sdb.Close()
		return nil, err
	}
	if known := SchemaVersion(); v > known {
		sdb.Close()
		return nil, tooNew(name, v, known)
	}
	if wal {
		// busy_timeout is set: the switch waits for another writer's lock.
		if _, err := sdb.ExecContext(ctx, `PRAGMA journal_mode=WAL`); err != nil {
			sdb.Close()
			return nil, fmt.Errorf("open results %s: switch to WAL: %w", name, d.classify(err))
		}
	}
	if err := d.migrate(ctx); err != nil {
		sdb.Close()
		return nil, err
	}
	if diffs, err := schemaDifferences(ctx, sdb); err != nil || len(diffs) > 0 {
		sdb.Close()
		if err != nil {
			return nil, fmt.Errorf("open results %s: read its schema: %w", name, d.classify(err))
		}
		return nil, tamperedError(name, diffs)
	}
	return d, nil
}

// OpenReadOnly opens an existing results file so that the engine itself
// refuses every write: the file is opened with mode=ro, the connection is
// query_only, and an authorizer denies ATTACH (which could otherwise create
// and write another file), attempts to switch query_only off, and journal
// or locking mode switches. It never creates or migrates the file.
//
// A file where SQLite cannot make the -shm that WAL mode needs beside it
// (a read-only mount or directory) is opened immutable instead, and
// Immutable says so; one whose -wal still holds rows is refused, since an
// immutable open would not read them.
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	return OpenReadOnlyWith(ctx, path, ReadOptions{})
}

// OpenReadOnlyWith is OpenReadOnly with options.
func OpenReadOnlyWith(ctx context.Context, path string, opt ReadOptions) (*DB, error) {
	if err := mustExist(path); err != nil {
		return nil, err
	}
	h, err := holdFile(path, false)
	if err != nil {
		return nil, err
	}
	sdb, immutable, err := openReaderOrImmutable(ctx, path)
	if err != nil {
		h.close()
		return nil, err
	}
	if err := checkReadable(ctx, sdb, path); err != nil {
		sdb.Close()
		h.close()
		return nil, err
	}
	d := &DB{db: sdb, path: path, readOnly: true, immutable: immutable, hold: h}
	diffs, err := schemaDifferences(ctx, sdb)
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("open results %s: read its schema: %w", path, d.classify(err))
	}
	if len(diffs) > 0 {
		if !opt.AllowTampered {
			d.Close()
			return nil, tamperedError(path, diffs)
		}
		d.tampered = diffs
	}
	return d, nil
}

// ReadOptions are how OpenReadOnlyWith opens a file.
type ReadOptions struct {
	// AllowTampered reads a file whose schema differs from what wfb makes
	// (ErrTampered) instead of refusing it; DB.Tampered then names the
	// differences, for every output to say.
	AllowTampered bool
}

// Tampered names how the file's schema differs from what wfb makes; empty
// for a file wfb's guarantees hold in. Only a read-only open with
// AllowTampered returns such a file.
func (d *DB) Tampered() []string { return d.tampered }

// checkReadable refuses a file whose schema this wfb cannot read as it is.
func checkReadable(ctx context.Context, sdb *sql.DB, path string) error {
	v, err := schemaVersion(ctx, sdb, path)
	if err != nil {
		return err
	}
	known := SchemaVersion()
	switch {
	case v > known:
		return tooNew(path, v, known)
	case v == 0:
		return fmt.Errorf("open results %s: the file has no schema yet: a wfb may be creating it right now (retry in a moment), or it is empty; %s to create the schema in it: %w",
			path, upgradeHint(path), ErrSchemaTooOld)
	case v < known:
		return fmt.Errorf("open results %s: this file has schema version %d, this wfb reads version %d; %s: %w",
			path, v, known, upgradeHint(path), ErrSchemaTooOld)
	}
	return nil
}

// upgradeHint says how to bring an older file at path up to this wfb's
// schema: wfb upgrade in place, or, where this process cannot write it or
// its directory (a read-only copy or mount), on a copy.
func upgradeHint(path string) string {
	db := shellword.Quote(path)
	if writable(path) != nil {
		return "it is read-only here: copy it somewhere writable, then run `wfb upgrade --db COPY` on the copy"
	}
	return "run `wfb upgrade --db " + db + "` to upgrade it in place (or copy it somewhere writable first and upgrade the copy)"
}

// mustExist refuses a path that is not there with ErrNoSuchFile.
func mustExist(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return notADirectory(path)
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("open results %s: %w: %w (give the results file with --db FILE or $WFB_DB, or record one first: wfb demo, wfb run BENCH)", path, ErrNoSuchFile, err)
	}
	return fmt.Errorf("open results %s: %w", path, err)
}

// notADirectory refuses a directory named as the results file: SQLite
// says only "disk I/O error" of one.
func notADirectory(path string) error {
	return fmt.Errorf("open results %s: it is a directory; name a results file (e.g. --db %s): %w",
		path, filepath.Join(path, "wfb.db"), ErrNotResultsFile)
}

func tooNew(path string, fileVersion, known int) error {
	return fmt.Errorf("open results %s: written with schema version %d, but this wfb knows only up to version %d; use a newer wfb (the file was not changed): %w",
		path, fileVersion, known, ErrSchemaTooNew)
}

func openReader(path string, params []string) (*sql.DB, error) {
	dsn, err := fileURI(path, params)
	if err != nil {
		return nil, fmt.Errorf("open results %s: %w", path, err)
	}
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("open results %s: %w", path, err)
	}
	sdb := sql.OpenDB(readOnlyConnector{c})
	sdb.SetMaxOpenConns(4)
	return sdb, nil
}

// probeVersion reads the schema version of an existing file without writing
// to it.
func probeVersion(ctx context.Context, path string) (int, error) {
	sdb, err := openReader(path, readerParams)
	if err != nil {
		return 0, err
	}
	defer sdb.Close()
	return schemaVersion(ctx, sdb, path)
}

// schemaVersion returns the newest migration recorded in the file: 0 for an
// empty database, ErrNotResultsFile for anything that is not ours, and
// ErrCorrupt for a damaged one.
func schemaVersion(ctx context.Context, sdb *sql.DB, path string) (int, error) {
	var objects, hasTable int
	err := sdb.QueryRowContext(ctx,
		`SELECT count(*), count(*) FILTER (WHERE type = 'table' AND name = 'schema_migrations') FROM sqlite_schema`).
		Scan(&objects, &hasTable)
	if err != nil {
		if ferr := fileError(path, err); ferr != nil {
			return 0, ferr
		}
		return 0, fmt.Errorf("open results %s: %w", path, err)
	}
	switch {
	case objects == 0:
		return 0, nil
	case hasTable == 0:
		return 0, fmt.Errorf("open results %s: a SQLite database, but not one wfb wrote (no schema_migrations table): %w", path, ErrNotResultsFile)
	}
	var v sql.NullInt64
	if err := sdb.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil {
		if sqliteCode(err) == sqlite3.SQLITE_CORRUPT {
			return 0, fmt.Errorf("open results %s: %w (SQLite: %v)", path, ErrCorrupt, err)
		}
		return 0, fmt.Errorf("open results %s: read schema version: %w", path, err)
	}
	return int(v.Int64), nil
}

// fileError names a file SQLite found is not a database at all
// (ErrNotResultsFile) or a damaged one (ErrCorrupt); nil for other errors.
func fileError(path string, err error) error {
	switch sqliteCode(err) {
	case sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("open results %s: the file is not a SQLite database: %w", path, ErrNotResultsFile)
	case sqlite3.SQLITE_CORRUPT:
		return fmt.Errorf("open results %s: %w (SQLite: %v)", path, ErrCorrupt, err)
	}
	return nil
}

// migrate applies every missing migration, each recorded in
// schema_migrations, in ONE transaction: a reader sees the schema before or
// after, never a part of it, and a migration that fails (a file holding rows
// a new rule refuses) leaves the file at its old version. The version is
// read inside the transaction, so two processes opening one new file do not
// both apply a step.
func (d *DB) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	known := ms[len(ms)-1].version
	err = d.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER PRIMARY KEY,
			name       TEXT NOT NULL,
			applied_at TEXT NOT NULL
		)`); err != nil {
			return err
		}
		var cur sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&cur); err != nil {
			return err
		}
		if int(cur.Int64) > known {
			return tooNew(d.path, int(cur.Int64), known)
		}
		d.migratedFrom = int(cur.Int64)
		for _, m := range ms[cur.Int64:] {
			if err := applyMigration(ctx, tx, m); err != nil {
				return err
			}
		}
		if cur.Int64 > 0 && cur.Int64 < runRowsVersion && known >= runRowsVersion {
			// The copies of the finished runs' rows are made by Go
			// (their encoding is wfb's), in the migrations' transaction.
			return copyAllRunRowsTx(ctx, tx)
		}
		return nil
	})
	if err != nil && !errors.Is(err, ErrSchemaTooNew) {
		return fmt.Errorf("open results %s: migrate: %w", d.path, err)
	}
	return err
}

func applyMigration(ctx context.Context, tx *sql.Tx, m migration) error {
	text, err := m.sql()
	if err != nil {
		return fmt.Errorf("migration %s: %w", m.name, err)
	}
	if _, err := tx.ExecContext(ctx, text); err != nil {
		if sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT {
			return fmt.Errorf("migration %s: the file holds rows its rules refuse (%v); the file was not migrated: %w",
				m.name, err, ErrMigrationRefused)
		}
		return fmt.Errorf("migration %s: %w", m.name, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.version, m.name, formatTime(time.Now()))
	return err
}

// Close closes the file and gives up its locks, after SQLite has closed
// it (see heldFile).
func (d *DB) Close() error {
	d.closeStmts()
	err := d.db.Close()
	if d.hold != nil {
		d.hold.close()
		d.hold = nil
	}
	return err
}

// Path returns the file name the DB was opened with.
func (d *DB) Path() string { return d.path }

// Tx runs fn in a transaction, committing if fn returns nil and rolling back
// if it returns an error or panics (the panic is re-raised).
func (d *DB) Tx(ctx context.Context, fn func(*sql.Tx) error) (err error) {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return d.classify(err)
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if err = fn(tx); err != nil {
		return err
	}
	return d.classify(tx.Commit())
}

// Query runs an ad hoc query and returns its columns and rows. Values are
// nil for NULL, int64, float64, string or []byte. On a read-only DB a write
// is refused by the engine and reported as ErrReadOnly; a query SQLite
// rejects is reported as ErrBadQuery with SQLite's message.
func (d *DB) Query(ctx context.Context, query string, args ...any) ([]string, [][]any, error) {
	rows, err := d.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, d.classify(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, d.classify(err)
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, d.classify(err)
		}
		for i, v := range vals {
			vals[i] = normalize(v)
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, d.classify(err)
	}
	return cols, out, nil
}

// Scanner reads the current row of a query into typed destinations, as
// (*sql.Rows).Scan does: *int64, *float64, *string, *sql.NullInt64,
// *sql.NullFloat64, *sql.NullString and the like. A NULL scanned into a
// sql.Null* type is Valid=false; into a plain type it is an error, never a
// zero.
type Scanner interface {
	Scan(dest ...any) error
}

// Each runs query and calls fn once per row, in order, as the rows are read:
// nothing is buffered and nothing is boxed, so a million rows cost a
// million calls and the allocations of the destinations fn chooses, where
// Query holds every row as []any. fn reads the row through s; an error from
// fn stops the query and is returned as it is. Engine errors are classified
// as in Query (ErrReadOnly, ErrBadQuery).
func (d *DB) Each(ctx context.Context, query string, args []any, fn func(s Scanner) error) error {
	rows, err := d.db.QueryContext(ctx, query, args...)
	if err != nil {
		return d.classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return d.classify(err)
	}
	return d.classify(rows.Close())
}

// normalize narrows what the driver may hand back to the documented set.
// The driver turns columns declared DATE/TIME-like into time.Time and
// BOOLEAN into bool; a query over an attached or foreign schema could
// produce either.
func normalize(v any) any {
	switch x := v.(type) {
	case time.Time:
		return formatTime(x)
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case int:
		return int64(x)
	case float32:
		return float64(x)
	}
	return v
}

// classify wraps engine refusals in the package's sentinel errors, keeping
// SQLite's own message.
func (d *DB) classify(err error) error {
	if err == nil {
		return nil
	}
	switch sqliteCode(err) {
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_AUTH:
		return fmt.Errorf("%w: %v", ErrReadOnly, err)
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	case sqlite3.SQLITE_ERROR:
		return fmt.Errorf("%w: %v", ErrBadQuery, err)
	}
	return err
}

// sqliteCode returns the primary SQLite result code behind err, or -1.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return -1
}

// readOnlyConnector installs the read-only authorizer on every connection
// the pool opens, so no pooled connection is ever without it.
type readOnlyConnector struct{ driver.Connector }

func (c readOnlyConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	reg, ok := conn.(sqlite.AuthorizerRegisterer)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("sqlite driver connection %T cannot take an authorizer", conn)
	}
	if err := reg.RegisterAuthorizer(readOnlyAuthorizer); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// readOnlyAuthorizer denies what mode=ro does not cover. ATTACH can create
// and write a second file (VACUUM INTO attaches its target the same way),
// and query_only can be switched off by a PRAGMA. Setting journal_mode
// rewrites the file's header (on a read-only handle SQLite answers with a
// "disk I/O error"), and an exclusive locking_mode would hold other
// processes' writers off the file: both are refused as writes. Everything
// else that writes already fails on the read-only file.
func readOnlyAuthorizer(action sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
	switch action {
	case sqlite.AuthAttach:
		return sqlite.AuthorizerDeny
	case sqlite.AuthPragma:
		if arg2 != "" && slices.ContainsFunc([]string{"query_only", "journal_mode", "locking_mode"}, func(p string) bool {
			return strings.EqualFold(arg1, p)
		}) {
			return sqlite.AuthorizerDeny
		}
	}
	return sqlite.AuthorizerOK
}
