//! The shared backend: a PostgreSQL server (`--db postgres://user@host/db`,
//! or over a Unix socket `postgresql://user@/db?host=/run/postgresql`),
//! through the synchronous `postgres` crate (pure Rust: the binary stays
//! static). No TLS: reach the server over a socket, a trusted network or a
//! tunnel.

use super::{Backend, Conn, DbError, Value};
use postgres::types::{ToSql, Type};
use postgres::{Client, NoTls};
use std::collections::HashMap;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

/// The store on a server: its connection lives on a thread of its own, and
/// every call waits for that thread's answer within a timeout
/// ([`CONNECT_TIMEOUT`], [`STATEMENT_TIMEOUT`]) and gives up at SIGINT or
/// SIGTERM: a server that accepts and never answers blocks that thread, not
/// oscycles (issue 43, item 12).
pub struct Postgres {
    asks: Sender<Ask>,
    replies: Receiver<Result<Reply, DbError>>,
    /// Why the connection is unusable (a call it never answered).
    broken: Option<String>,
}

/// How long connecting (and the server's greeting) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one statement (or a commit) may take.
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(60);

/// What the caller asks the connection's thread.
enum Ask {
    Begin,
    Exec(String, Vec<Value>),
    Query(String, Vec<Value>),
    LockSchema,
    Commit,
    Rollback,
}

/// Its answer.
enum Reply {
    Done,
    Count(u64),
    Rows(Vec<Vec<Value>>),
}

/// The URL without its password, for messages: rebuilt from what the
/// PostgreSQL client parses of it (user, hosts, ports, database), never
/// from its text, so that no spelling of a password (`user:password@`, a
/// `password=` in the query, percent-encoded: `%70assword=`) is shown; a
/// password there is shown as `***`. A URL the client cannot parse is
/// not shown at all.
pub fn redact(url: &str) -> String {
    let Ok(c) = url.parse::<postgres::Config>() else {
        return "postgresql://*** (a URL the PostgreSQL client cannot parse, not shown: it may hold a password)".into();
    };
    let user = c.get_user().unwrap_or("");
    let password = if c.get_password().is_some() { ":***" } else { "" };
    let at = if user.is_empty() && password.is_empty() { "" } else { "@" };
    let ports = c.get_ports();
    let hosts: Vec<String> = c
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let name = match h {
                postgres::config::Host::Tcp(n) => n.clone(),
                postgres::config::Host::Unix(p) => p.display().to_string(),
            };
            match ports.get(i).or(ports.first()) {
                Some(port) => format!("{name}:{port}"),
                None => name,
            }
        })
        .collect();
    format!("postgresql://{user}{password}{at}{}/{}", hosts.join(","), c.get_dbname().unwrap_or(""))
}

fn error(e: postgres::Error) -> DbError {
    match e.code() {
        Some(c) if *c == postgres::error::SqlState::UNIQUE_VIOLATION => DbError::Race(e.to_string()),
        // Serialization failures and deadlocks: another writer won; retry.
        Some(c) if *c == postgres::error::SqlState::T_R_SERIALIZATION_FAILURE || *c == postgres::error::SqlState::T_R_DEADLOCK_DETECTED => {
            DbError::Race(e.to_string())
        }
        _ => DbError::Sql(e.as_db_error().map_or_else(|| e.to_string(), |d| d.message().to_string())),
    }
}

impl Postgres {
    pub fn open(url: &str) -> Result<Postgres, DbError> {
        let refused = |e: String| DbError::Open(redact(url), e);
        let mut config: postgres::Config = url.parse().map_err(|e: postgres::Error| refused(e.to_string()))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let (asks, their_asks) = channel();
        let (their_replies, replies) = channel();
        std::thread::Builder::new()
            .name("postgres".into())
            .spawn(move || match config.connect(NoTls) {
                Ok(client) => {
                    if their_replies.send(Ok(Reply::Done)).is_ok() {
                        serve(client, their_asks, their_replies);
                    }
                }
                Err(e) => drop(their_replies.send(Err(DbError::Sql(e.to_string())))),
            })
            .map_err(|e| refused(e.to_string()))?;
        let mut pg = Postgres { asks, replies, broken: None };
        match pg.wait(CONNECT_TIMEOUT, "to connect") {
            Ok(_) => Ok(pg),
            Err(DbError::Sql(e)) => Err(refused(e)),
            Err(e) => Err(e),
        }
    }

    /// The connection thread's answer, within `limit`, unless SIGINT or
    /// SIGTERM came first (then the connection is given up).
    fn wait(&mut self, limit: Duration, doing: &str) -> Result<Reply, DbError> {
        let t = Instant::now();
        let why = loop {
            match self.replies.recv_timeout(Duration::from_millis(100)) {
                Ok(r) => return r,
                Err(RecvTimeoutError::Disconnected) => break "the connection's thread ended".to_string(),
                Err(RecvTimeoutError::Timeout) => {}
            }
            if let Some(sig) = crate::measure::watchdog::interrupted() {
                break format!("interrupted by signal {sig} while waiting for the server {doing}");
            }
            if t.elapsed() >= limit {
                break format!("the server did not answer within {} s (waiting {doing}); given up", limit.as_secs());
            }
        };
        self.broken = Some(why.clone());
        Err(DbError::Sql(why))
    }

    /// Asks the connection's thread and waits for its answer.
    fn ask(&mut self, a: Ask, limit: Duration, doing: &str) -> Result<Reply, DbError> {
        if let Some(why) = &self.broken {
            return Err(DbError::Sql(why.clone()));
        }
        if self.asks.send(a).is_err() {
            return Err(DbError::Sql("the connection to the server ended".into()));
        }
        self.wait(limit, doing)
    }
}

/// The connection's thread: a transaction at a time, each statement as asked.
fn serve(mut client: Client, asks: Receiver<Ask>, replies: Sender<Result<Reply, DbError>>) {
    let mut prepared = HashMap::new();
    while let Ok(ask) = asks.recv() {
        if !matches!(ask, Ask::Begin) {
            let _ = replies.send(Err(DbError::Sql("a statement outside a transaction".into())));
            continue;
        }
        let mut tx = match client.transaction() {
            Ok(t) => Tx(t, &mut prepared),
            Err(e) => {
                let _ = replies.send(Err(error(e)));
                continue;
            }
        };
        let _ = replies.send(Ok(Reply::Done));
        loop {
            let Ok(ask) = asks.recv() else { return };
            let r = match ask {
                Ask::Exec(sql, args) => tx.exec(&sql, &args).map(Reply::Count),
                Ask::Query(sql, args) => tx.query(&sql, &args).map(Reply::Rows),
                Ask::LockSchema => tx.lock_schema().map(|()| Reply::Done),
                Ask::Begin => Err(DbError::Sql("a transaction inside a transaction".into())),
                Ask::Commit => {
                    let _ = replies.send(tx.0.commit().map(|()| Reply::Done).map_err(error));
                    break;
                }
                Ask::Rollback => {
                    drop(tx);
                    let _ = replies.send(Ok(Reply::Done));
                    break;
                }
            };
            if replies.send(r).is_err() {
                return;
            }
        }
    }
}

fn bind(args: &[Value]) -> Vec<Box<dyn ToSql + Sync>> {
    args.iter()
        .map(|a| -> Box<dyn ToSql + Sync> {
            match a {
                Value::Text(t) => Box::new(t.clone()),
                Value::Int(i) => Box::new(*i),
                Value::Real(f) => Box::new(*f),
            }
        })
        .collect()
}

fn read(row: &postgres::Row, i: usize) -> Result<Value, postgres::Error> {
    let t = row.columns()[i].type_();
    Ok(if *t == Type::INT8 {
        Value::Int(row.try_get(i)?)
    } else if *t == Type::INT4 {
        Value::Int(row.try_get::<_, Option<i32>>(i)?.map(i64::from))
    } else if *t == Type::FLOAT8 {
        Value::Real(row.try_get(i)?)
    } else {
        Value::Text(row.try_get(i)?)
    })
}

struct Tx<'a>(postgres::Transaction<'a>, &'a mut HashMap<String, postgres::Statement>);

impl Tx<'_> {
    fn statement(&mut self, sql: &str, args: &[Value]) -> Result<(postgres::Statement, Vec<Box<dyn ToSql + Sync>>), DbError> {
        if let Some(st) = self.1.get(sql) {
            return Ok((st.clone(), bind(args)));
        }
        let types: Vec<Type> = args
            .iter()
            .map(|a| match a {
                Value::Text(_) => Type::TEXT,
                Value::Int(_) => Type::INT8,
                Value::Real(_) => Type::FLOAT8,
            })
            .collect();
        let st = self.0.prepare_typed(sql, &types).map_err(error)?;
        self.1.insert(sql.to_string(), st.clone());
        Ok((st, bind(args)))
    }
}

fn refs(b: &[Box<dyn ToSql + Sync>]) -> Vec<&(dyn ToSql + Sync)> {
    b.iter().map(|x| x.as_ref()).collect()
}

impl Conn for Tx<'_> {
    fn exec(&mut self, sql: &str, args: &[Value]) -> Result<u64, DbError> {
        let (st, b) = self.statement(sql, args)?;
        self.0.execute(&st, &refs(&b)).map_err(error)
    }

    fn query(&mut self, sql: &str, args: &[Value]) -> Result<Vec<Vec<Value>>, DbError> {
        let (st, b) = self.statement(sql, args)?;
        let rows = self.0.query(&st, &refs(&b)).map_err(error)?;
        rows.iter().map(|r| (0..r.len()).map(|i| read(r, i)).collect::<Result<Vec<_>, _>>().map_err(error)).collect()
    }

    fn lock_schema(&mut self) -> Result<(), DbError> {
        // One key for oscycles' schema changes, released at commit.
        self.0.execute("SELECT pg_advisory_xact_lock(7273001)", &[]).map_err(error)?;
        Ok(())
    }
}

/// A transaction as the caller sees it: each statement sent to the
/// connection's thread.
struct Remote<'a>(&'a mut Postgres);

impl Conn for Remote<'_> {
    fn exec(&mut self, sql: &str, args: &[Value]) -> Result<u64, DbError> {
        match self.0.ask(Ask::Exec(sql.into(), args.to_vec()), STATEMENT_TIMEOUT, "for a statement")? {
            Reply::Count(n) => Ok(n),
            _ => Ok(0),
        }
    }

    fn query(&mut self, sql: &str, args: &[Value]) -> Result<Vec<Vec<Value>>, DbError> {
        match self.0.ask(Ask::Query(sql.into(), args.to_vec()), STATEMENT_TIMEOUT, "for a query")? {
            Reply::Rows(rows) => Ok(rows),
            _ => Ok(vec![]),
        }
    }

    fn lock_schema(&mut self) -> Result<(), DbError> {
        self.0.ask(Ask::LockSchema, STATEMENT_TIMEOUT, "for the schema lock").map(drop)
    }
}

impl Backend for Postgres {
    fn transaction(&mut self, f: &mut dyn FnMut(&mut dyn Conn) -> Result<(), DbError>) -> Result<(), DbError> {
        self.ask(Ask::Begin, STATEMENT_TIMEOUT, "to begin a transaction")?;
        match f(&mut Remote(self)) {
            Ok(()) => self.ask(Ask::Commit, STATEMENT_TIMEOUT, "to commit").map(drop),
            Err(e) => {
                let _ = self.ask(Ask::Rollback, STATEMENT_TIMEOUT, "to roll back");
                Err(e)
            }
        }
    }
}
